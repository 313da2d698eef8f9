"""The ``refitwire`` command: one module per verb, each with ``add_arguments`` and ``run``.

Results go to stdout, diagnostics to stderr. Every verb exits with one of EXIT_STATUSES
(``refitwire --help`` lists them; README.md's table is written from them). Only the module of
the verb being run is imported, so a verb starts without the others' dependencies, and a
verb whose optional extra is missing says which one to install.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import importlib.util
import json
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, NoReturn

if TYPE_CHECKING:
    from refitwire.wire import SchemaFolderError

#: Verbs in help order; each is the module refitwire.cli.<verb> (a verb whose module is not
#: there yet is left out, so parts of the kit can land one at a time).
VERBS = (
    "validate", "decode", "digest", "schema", "matrix", "conformance", "report", "diff", "gate", "refit", "bench",
    "cache",
)  # fmt: skip

#: Which extra brings a module that a verb may import (top-level module name -> extra). The
#: base dependencies (referencing, msgspec, ...) are not here: a missing one is a broken install.
EXTRA_OF_MODULE = {
    "hypothesis": "kit",
    "hypothesis_jsonschema": "kit",
    "jsonschema": "kit",
    "torch": "refit",
    "nixl": "refit",
    "nixl_cu12": "refit",
    "redis": "refit",
}

#: The extra a verb needs when the ImportError names no module (a native library that fails
#: to load). A named module that no extra brings (a core dependency, the standard library)
#: is not blamed on an extra: it is re-raised.
EXTRA_OF_VERB = {
    "matrix": "kit",
    "conformance": "kit",
    "report": "kit",
    "diff": "kit",
    "gate": "kit",
    "bench": "kit",
    "refit": "refit",
}

#: A mistake on the command line: the one status every verb gives it, argparse's own.
USAGE_EXIT = 2
#: Every exit status of every verb and what it means (``refitwire --help``, README.md's table by
#: tools/build_exit_codes.py). 0, 1 and 100 are the gate's ``EXIT_*`` too (tests/test_cli.py).
EXIT_STATUSES = (
    (0, "success: every check passed (diff, gate: compatible)"),
    (1, "a check failed, or what was to be checked could not be (a file, a git ref, a schema, a baseline, "
        "a testee that did not start, a run that checked nothing); one line on stderr, never a traceback"),
    (USAGE_EXIT, "usage error: an unknown option, a bad or missing value, a missing extra, an unreadable "
                 "schema folder"),
    (100, "diff, gate: a breaking change"),
    (130, "interrupted"),
)  # fmt: skip
_NEGATIVE_NUMBER = re.compile(r"-\d+|-\d*\.\d+")  # a value such as --seed -1, never an option


class _Parser(argparse.ArgumentParser):
    """argparse that exits 2 on every usage error and names unknown options first."""

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        self._given = list(sys.argv[1:] if args is None else args)
        return super().parse_known_args(self._given, namespace)

    def error(self, message: str) -> NoReturn:
        unknown = self._unknown_options()
        if unknown and message.startswith("the following arguments are required"):
            # An option the verb does not have explains the missing argument better.
            message = f"unrecognized arguments: {' '.join(unknown)}"
        self.print_usage(sys.stderr)
        self.exit(USAGE_EXIT, f"{self.prog}: error: {message}\n")

    def _unknown_options(self) -> list[str]:
        known = [option for action in self._actions for option in action.option_strings]
        unknown = []
        for token in getattr(self, "_given", []):
            if token == "--":
                break
            if not token.startswith("-") or token == "-" or _NEGATIVE_NUMBER.fullmatch(token):
                continue
            name = token.split("=", 1)[0]
            if not any(
                option == name or (name.startswith("--") and option.startswith(name)) for option in known
            ):
                unknown.append(token)
        return unknown


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    chosen = next((token for token in argv if not token.startswith("-")), None)
    # The verb list with one line each is only shown by help or a usage error at the top.
    describe = chosen not in VERBS or any(token in ("-h", "--help") for token in argv[: argv.index(chosen)])
    parser = _Parser(
        prog="refitwire",
        description="The refit rendezvous blob: spec, codec, compat.",
        epilog="exit status, every verb:\n"
        + "\n".join(f"  {code:<4} {text}" for code, text in EXIT_STATUSES),
        formatter_class=argparse.RawDescriptionHelpFormatter,  # the statuses one a line
    )
    verbs = parser.add_subparsers(dest="verb", required=True, metavar="VERB")
    for verb in VERBS:
        spec = importlib.util.find_spec(f"refitwire.cli.{verb}")
        if spec is None:
            continue
        if verb != chosen:  # listed for help and for argparse's choices, never imported
            verbs.add_parser(verb, help=_summary(spec.origin) if describe else None)
            continue
        # The internal API brings the codec, the rule engine, numpy and pydantic, so only a chosen
        # verb imports it: the verb list (``refitwire --help``) is shown without them.
        from refitwire.wire import SchemaFolderError, default_registry

        try:
            module = _load(verb)
            # The one registry of this command (the package's schemas, or $REFITWIRE_SCHEMA_DIR's),
            # handed to the verb's arguments and its run (``args.registry``); nothing below builds one.
            registry = default_registry()
        except SchemaFolderError as exc:
            return _bad_folder(verb, exc)
        if isinstance(module, str):
            return _missing(verb, module)
        sub = verbs.add_parser(verb, help=_summary(spec.origin), description=module.__doc__)
        try:
            module.add_arguments(sub, registry)
        except ImportError as exc:
            return _missing(verb, _extra_for(verb, exc))
        sub.set_defaults(run=module.run, parser=sub, registry=registry)
    args, extra = parser.parse_known_args(argv)
    if extra:  # reported by the verb's parser, so its usage line is shown
        args.parser.error(f"unrecognized arguments: {' '.join(extra)}")
    return _run(args.verb, args.run, args)


def _run(verb: str, run: Callable[[argparse.Namespace], Any], args: argparse.Namespace) -> int:
    from refitwire.wire import SchemaFolderError  # imported by the verb already (see main)

    try:
        return int(run(args))
    except ImportError as exc:  # a verb that imports its heavy modules when it runs
        return _missing(verb, _extra_for(verb, exc))
    except SchemaFolderError as exc:
        return _bad_folder(verb, exc)
    except BrokenPipeError:
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


def _load(verb: str) -> ModuleType | str:
    """The verb's module, or the extra to install when an import it needs is missing."""
    try:
        return importlib.import_module(f"refitwire.cli.{verb}")
    except ImportError as exc:
        return _extra_for(verb, exc)


def _extra_for(verb: str, exc: ImportError) -> str:
    """'<module> (the <extra> extra)' for a missing optional module; anything else is a bug."""
    extra = EXTRA_OF_MODULE.get(exc.name.split(".")[0]) if exc.name else EXTRA_OF_VERB.get(verb)
    if extra is None:
        raise exc
    return f"{exc.name or 'an optional package'}: {install_hint(extra, installed_from())}"


def installed_from() -> dict[str, Any]:
    """Where this refitwire was installed from: its ``direct_url.json`` (PEP 610), or ``{}``.

    The record beside the running package (an installed ``refitwire/cli/`` sits in
    site-packages), not the first ``refitwire`` metadata on the path: a checkout's own
    ``refitwire.egg-info`` in the current folder would shadow it."""
    import importlib.metadata  # here: a verb that runs imports none of it

    site = Path(__file__).resolve().parents[2]
    for dist in importlib.metadata.distributions(name="refitwire", path=[str(site)]):
        record = dist.read_text("direct_url.json")
        found: dict[str, Any] = json.loads(record) if record else {}
        return found
    return {}  # run from a checkout (an editable install): no record beside it


def install_hint(extra: str, origin: dict[str, Any]) -> str:
    """The line that adds ``extra`` from the source refitwire came from (``origin``, PEP 610): no
    package index holds a release of it, so ``pip install 'refitwire[kit]'`` would find nothing."""
    from urllib.parse import urlparse
    from urllib.request import url2pathname

    url = origin.get("url", "")
    vcs = origin.get("vcs_info")
    if vcs:
        return f"pip install 'refitwire[{extra}] @ {vcs['vcs']}+{url}@{vcs['commit_id']}'"
    if origin.get("dir_info", {}).get("editable"):
        return f"pip install -e '{url2pathname(urlparse(url).path)}[{extra}]'"
    if url.startswith("file:") and Path(url2pathname(urlparse(url).path)).exists():
        return f"pip install 'refitwire[{extra}] @ {url}'"
    return f"install refitwire again with its {extra} extra (README.md, Install)"


def _missing(verb: str, what: str) -> int:
    print(f"refitwire {verb}: needs {what}", file=sys.stderr)
    return USAGE_EXIT


def _bad_folder(verb: str, exc: SchemaFolderError) -> int:
    print(f"refitwire {verb}: the schema folder cannot be read: {exc}", file=sys.stderr)
    return USAGE_EXIT


def _summary(origin: str | None) -> str:
    """The first line of a verb module's docstring, read without importing the module."""
    if origin is None:
        return ""
    with open(origin, encoding="utf-8") as source:
        doc = ast.get_docstring(ast.parse(source.read())) or ""
    return doc.splitlines()[0] if doc else ""
