"""Run the kit's own checks on the released upstream participants alone: python tools/_upstream_cases.py OUT.

Started by ``_vector_upstream.measure`` as a fresh process, so the golden vectors it reads are
the ones the build just wrote (a process that built them may hold the earlier ones). Writes
the JSON-lines report of a matrix whose participants are the released modelexpress readers and
writers only: every golden read, write (with its variants) and writer refusal case, the size
cases, the digest cases and the protocol probes, each with its derived results (``#rule``,
``:bytes``), exactly as ``refitwire matrix`` judges them.
"""

from __future__ import annotations

import sys
from pathlib import Path

import _clone  # noqa: F401  (this checkout's packages first)
from refitwire import compat


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        raise SystemExit("usage: python tools/_upstream_cases.py OUT.jsonl")
    found, missing = compat.upstream()
    if not found or missing:
        raise SystemExit(
            f"the released upstream participants are needed: {'; '.join(missing) or 'none found'}"
        )
    # One generated payload: the cross cases between the releases are not what is measured here.
    plan = compat.Plan(found, seed=0, examples=1, upstream="ran")
    with Path(argv[0]).open("w", encoding="utf-8") as stream:
        compat.run_matrix(plan, stream)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
