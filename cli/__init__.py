"""The ``refitwire`` command: one module per verb, each with ``add_arguments`` and ``run``.

Results go to stdout, diagnostics to stderr. Exit codes: 0 success, 1 a check failed,
2 usage error (a verb may document others, e.g. the gate's 100 for a breaking change).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

#: verb -> module under refitwire.cli; a verb lists here once its module exists.
VERBS = {
    "validate": "validate",
    "decode": "decode",
    "digest": "digest",
    "schema": "schema",
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="refitwire", description="The refit rendezvous blob: spec, codec, compat.")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    for verb, module_name in VERBS.items():
        module = importlib.import_module(f"refitwire.cli.{module_name}")
        doc = module.__doc__ or verb
        sub = verbs.add_parser(verb, help=doc.splitlines()[0], description=doc)
        module.add_arguments(sub)
        sub.set_defaults(run=module.run)
    args = parser.parse_args(argv)
    try:
        return int(args.run(args))
    except BrokenPipeError:
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
