"""The ``refitwire`` command: one module per verb, each with ``add_arguments`` and ``run``.

Results go to stdout, diagnostics to stderr. Exit codes: 0 success, 1 a check failed,
2 usage error (a verb may document others, e.g. the gate's 100 for a breaking change).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from collections.abc import Sequence

#: Verbs in help order; each is the module refitwire.cli.<verb> (a verb whose module is not
#: there yet is left out, so parts of the kit can land one at a time).
VERBS = ("validate", "decode", "digest", "schema", "matrix", "conformance", "diff", "gate", "refit", "bench")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="refitwire", description="The refit rendezvous blob: spec, codec, compat.")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    for verb in VERBS:
        if importlib.util.find_spec(f"refitwire.cli.{verb}") is None:
            continue
        module = importlib.import_module(f"refitwire.cli.{verb}")
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
