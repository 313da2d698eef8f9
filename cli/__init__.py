"""The ``refitwire`` command: one module per verb, each with ``add_arguments`` and ``run``.

Results go to stdout, diagnostics to stderr. Exit codes: 0 success, 1 a check failed,
2 usage error. A verb may say otherwise: the gate exits 100 on a breaking change and 1 on a
usage error (its module sets USAGE_EXIT).
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

#: Verbs in help order; each is the module refitwire.cli.<verb> (a verb whose module is not
#: there yet is left out, so parts of the kit can land one at a time).
VERBS = ("validate", "decode", "digest", "schema", "matrix", "conformance", "diff", "gate", "refit", "bench")


class _Parser(argparse.ArgumentParser):
    """argparse with a per-verb exit code for usage errors (the gate's contract says 1)."""

    usage_exit = 2

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(self.usage_exit, f"{self.prog}: error: {message}\n")


def _missing_extra(verb: str, exc: ImportError) -> Callable[[argparse.Namespace], int]:
    def run(_args: argparse.Namespace) -> int:
        print(
            f"refitwire {verb}: needs {exc.name or 'an optional package'}: pip install 'refitwire[refit]'",
            file=sys.stderr,
        )
        return 2

    return run


def main(argv: Sequence[str] | None = None) -> int:
    parser = _Parser(prog="refitwire", description="The refit rendezvous blob: spec, codec, compat.")
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    for verb in VERBS:
        if importlib.util.find_spec(f"refitwire.cli.{verb}") is None:
            continue
        module = importlib.import_module(f"refitwire.cli.{verb}")
        doc = module.__doc__ or verb
        sub = verbs.add_parser(verb, help=doc.splitlines()[0], description=doc)
        sub.usage_exit = getattr(module, "USAGE_EXIT", 2)
        try:
            module.add_arguments(sub)
        except ImportError as exc:  # an optional extra (torch, NIXL) is not installed
            sub.set_defaults(run=_missing_extra(verb, exc), parser=sub)
            continue
        sub.set_defaults(run=module.run, parser=sub)
    args, extra = parser.parse_known_args(argv)
    if extra:  # reported by the verb's parser, so the verb's usage exit code applies
        args.parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        return int(args.run(args))
    except BrokenPipeError:
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
