"""A testee that answers as its arguments say: ``python scripted_testee.py START [REPLY]``.

``START`` (JSON) answers ``start``; ``REPLY`` (JSON) answers every other request, with the
request's ``seq`` unless ``REPLY`` gives one. A malformed reply is then one argument away, so a
test can send each kind of reply with a member missing or of the wrong type through the runner's
own exchange. Standard library only: it starts in a few hundredths of a second.
"""

from __future__ import annotations

import json
import sys

if __name__ == "__main__":
    start = json.loads(sys.argv[1])
    scripted = json.loads(sys.argv[2]) if len(sys.argv) > 2 else {"skipped": True, "reason": "scripted"}
    for line in sys.stdin:
        request = json.loads(line)
        if request.get("cmd") == "stop":
            break
        answer = start if request.get("cmd") == "start" else {"seq": request.get("seq"), **scripted}
        sys.stdout.write(json.dumps(answer) + "\n")
        sys.stdout.flush()
