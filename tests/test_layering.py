"""The packages talk through public names: none imports another package's private (``_``) module.

A package is a folder of the architecture (README "What lives where"): the reference
(``reference/``, i.e. ``refitwire``, with its private low layer ``refitwire._wire``),
``refitwire.refit``, ``compat``, ``gate``, ``cli`` and ``bench``. Within a package, ``_``
modules are its own business; across packages only public modules and names may be used:
each package's ``__init__`` and the kit's one internal API, ``refitwire.wire`` (the
reference's public module above its ``_`` modules).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = {"reference": "refitwire", "compat": "refitwire.compat", "gate": "refitwire.gate",
           "cli": "refitwire.cli", "bench": "refitwire.bench"}  # fmt: skip
SUBPACKAGES = ("refit",)  # packages of their own inside reference/


def package_of_file(path: Path) -> str:
    parts = path.relative_to(ROOT).parts
    if parts[0] == "reference" and len(parts) > 2 and parts[1] in SUBPACKAGES:
        return f"refitwire.{parts[1]}"
    return FOLDERS[parts[0]]


def package_of_module(module: str) -> str:
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in SUBPACKAGES:
        return ".".join(parts[:2])
    if len(parts) > 1 and parts[1] in ("compat", "gate", "cli", "bench", "schema"):
        return ".".join(parts[:2])
    return "refitwire"


def private_imports(path: Path, source: str | None = None) -> list[str]:
    """``file:line imports module`` for each import of another package's private module
    (``source``: the file's text, when it is not read from ``path``)."""
    mine, found = package_of_file(path), []
    text = path.read_text(encoding="utf-8") if source is None else source
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("refitwire"):
            modules = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        elif isinstance(node, ast.Import):
            modules = [a.name for a in node.names if a.name.startswith("refitwire")]
        else:
            continue
        flagged: dict[str, None] = {}  # one line per private module a statement reaches
        for module in modules:
            parts = module.split(".")
            private = next(
                (i for i, p in enumerate(parts) if p.startswith("_") and not p.startswith("__")), None
            )
            if private is not None and package_of_module(".".join(parts[: private + 1])) != mine:
                flagged[".".join(parts[: private + 1])] = None
        found += [f"{path.relative_to(ROOT)}:{node.lineno} imports {module}" for module in flagged]
    return found


def sources() -> list[Path]:
    return [
        p for folder in FOLDERS for p in sorted((ROOT / folder).rglob("*.py")) if "generations" not in p.parts
    ]


def test_no_package_imports_another_packages_private_module() -> None:
    found = [line for path in sources() for line in private_imports(path)]
    assert not found, "\n".join(found)


def test_the_check_sees_a_private_import() -> None:
    """The check can fail: a cli module reaching into compat's privates is named."""
    # Planted as text, never written: a file in cli/ would be seen by a sibling test on another worker.
    offender = ROOT / "cli" / "_layering_probe.py"
    planted = "from refitwire.compat._run import Plan\nfrom refitwire.compat import _render\n"
    assert [line.split(" imports ")[1] for line in private_imports(offender, planted)] == [
        "refitwire.compat._run",
        "refitwire.compat._render",
    ]
    assert not offender.exists()


def test_only_the_reference_reads_the_wires_low_layer() -> None:
    """The kit reaches the wire through its one internal API, never ``refitwire._wire``; the API
    (``refitwire.wire``, the reference's own public module) reads the library's private modules."""
    kit_module = ROOT / "compat" / "_layering_probe.py"
    assert [
        line.split(" imports ")[1]
        for line in private_imports(kit_module, "from refitwire._wire import Registry\n")
    ] == ["refitwire._wire"]
    api = ROOT / "reference" / "wire" / "__init__.py"
    assert (
        private_imports(
            api, "from refitwire._codec import rendezvous_document\nfrom refitwire._wire import pointer\n"
        )
        == []
    )


#: The kit's packages; the library (``refitwire``, ``refitwire.wire``, ``refitwire.refit``) stands
#: without them. ``python -m refitwire`` (reference/__main__.py) is the CLI's door, not the library.
KIT = ("refitwire.compat", "refitwire.gate", "refitwire.cli", "refitwire.bench")


def kit_imports(path: Path, source: str | None = None) -> list[str]:
    """``file:line imports module`` for each import of a kit package by a library file."""
    text = path.read_text(encoding="utf-8") if source is None else source
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom) and node.module:
            modules = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        elif isinstance(node, ast.Import):
            modules = [a.name for a in node.names]
        else:
            continue
        hit = next((m for m in modules if any(m == k or m.startswith(f"{k}.") for k in KIT)), None)
        if hit is not None:
            found.append(f"{path.relative_to(ROOT)}:{node.lineno} imports {hit}")
    return found


def test_the_library_never_imports_the_kit() -> None:
    library = [p for p in sorted((ROOT / "reference").rglob("*.py")) if p.name != "__main__.py"]
    found = [line for path in library for line in kit_imports(path)]
    assert not found, "\n".join(found)


def test_the_check_sees_the_library_lean_on_the_kit() -> None:
    """The check can fail: the refit's old import of the kit's upstream builder is named."""
    offender = ROOT / "reference" / "refit" / "_publisher.py"
    planted = "def f():\n    from refitwire.compat.upstream import UPSTREAM_OBJECTS\n"
    assert kit_imports(offender, planted) == [
        "reference/refit/_publisher.py:2 imports refitwire.compat.upstream"
    ]
