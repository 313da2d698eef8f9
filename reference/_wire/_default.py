"""Where the default registry comes from, and the one factory of it.

:func:`default_registry` is the package's ``schema/`` folder through its real path (so a file
added to a checkout is seen without reinstalling), or the folder ``$REFITWIRE_SCHEMA_DIR``
names when it is set. Only the entry points call it (the names of ``refitwire.__all__``, the
CLI, the kit's runs): every function below them is handed the registry they built and never
falls back to a default (tests/test_registry_passed.py). Nothing here is built at import.
"""

from __future__ import annotations

import functools
import os
import threading
from importlib import resources
from pathlib import Path

from refitwire._wire._errors import SchemaFolderError
from refitwire._wire._registry import Registry, unreleased_files

#: Names another schema folder the default registry is built from (a copy of ``schema/``).
ENV_VAR = "REFITWIRE_SCHEMA_DIR"


@functools.cache
def package_root() -> Path:
    """The package's own ``schema/`` folder, where the kit's files live (the protocol, the report
    format, the golden vectors) whatever ``$REFITWIRE_SCHEMA_DIR`` says.

    Its real folder: an editable install links each file, and a file added after installing
    (a new version) would be missing from the links."""
    package = Path(str(resources.files("refitwire.schema")))
    return (package / "__init__.py").resolve().parent


def default_registry() -> Registry:
    """The registry of ``$REFITWIRE_SCHEMA_DIR`` when it is set now, else of the package's
    ``schema/`` folder: the variable is read on every call and is only a way to name the
    folder, so setting it names another registry, never a stale one."""
    override = os.environ.get(ENV_VAR)
    if not override:
        return registry_at(package_root())
    try:
        return registry_at(
            _resolved(override if os.path.isabs(override) else os.path.join(os.getcwd(), override))
        )
    except SchemaFolderError as exc:
        raise SchemaFolderError(f"${ENV_VAR}: {exc}") from None


@functools.lru_cache(maxsize=8)
def _resolved(folder: str) -> Path:
    # The variable's absolute value, resolved once: a realpath on every call cost about 19 us,
    # five times what the rest of a small blob's read costs.
    return Path(folder).resolve()


def registry_at(folder: Path) -> Registry:
    """:meth:`Registry.from_folder` of ``folder`` (a resolved path), kept while the files it was
    built from are as they were: a registry is immutable and compiling its models costs tenths
    of a second, but a file written since (a new candidate, an edited SPEC.md) is another registry.

    The package's own folder's registry is kept as long as its files stand, whatever other
    folders are read: its models are ``PublishedTensor`` and ``PublishedShard``, and a class
    imported once must stay the class of what is read later. Of other folders the last
    ``_KEPT`` read are kept."""
    with _LOCK:
        found = _BUILT.pop(folder, None)
        if found is None or _stamps(found[0]) != found[1]:  # new, or stale: the folder changed under it
            registry = Registry.from_folder(folder)
            found = (registry, _stamps(registry))
        _BUILT[folder] = found  # the most recently read last
        if len(_BUILT) > _KEPT + 1:
            others = [kept for kept in _BUILT if kept != package_root()]
            for oldest in others[: len(others) - _KEPT]:
                del _BUILT[oldest]
        return found[0]


_KEPT = 8
_LOCK = threading.Lock()
#: Each folder's registry and the stamps of its files when it was built, least recently read first.
_BUILT: dict[Path, tuple[Registry, tuple[tuple[int, int], ...]]] = {}


def _stamps(registry: Registry) -> tuple[tuple[int, int], ...]:
    """Size and modification time of what ``registry`` was read from."""
    stamps = []
    for path in _sources(registry):
        try:
            stat = os.stat(path)
        except OSError:
            return ()  # gone: never equal to the stamps at build
        stamps.append((stat.st_size, stat.st_mtime_ns))
    return tuple(stamps)


@functools.lru_cache(maxsize=8)
def _sources(registry: Registry) -> tuple[str, ...]:
    """``index.json``, SPEC.md, the documents' folders (a file added or removed changes its
    folder's) and the candidates' schema files, as strings (a Path join on every call cost more
    than the stats). A released file is not watched: it never changes (``index.json`` holds its
    sha256, and the gate fails a change to it), and four stats instead of ten halve what the
    default registry costs a small blob's read."""
    folder = registry.folder
    paths = [
        folder / "index.json",
        folder / "SPEC.md",
        *(folder / document for document in registry.documents),
        *(folder / document / f"{version}.json" for document in registry.documents
          for version in registry.candidate_versions(document)),
    ]  # fmt: skip
    return tuple(map(str, paths))


def registry_or_default(registry: Registry | None) -> Registry:
    """``registry``, or the default one when it is ``None``: for the public entry points alone
    (``refitwire.__all__``), each of which calls it once and hands the result down."""
    return default_registry() if registry is None else registry


def released_versions(registry: Registry | None = None) -> tuple[str, ...]:
    """The released spec versions, oldest first (a public entry point: ``refitwire.released_versions``;
    everything below the entry points asks its registry, ``registry.released_versions()``)."""
    return registry_or_default(registry).released_versions()


def unreleased_versions(folder: Path, registry: Registry, document: str = "rendezvous") -> tuple[str, ...]:
    """Versions of ``document`` that have a schema file in ``folder`` (a ``schema/`` folder) but
    are not released in ``registry``: the candidates, in version order."""
    return unreleased_files(folder, registry.released_versions(), document)
