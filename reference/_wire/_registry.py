"""One immutable registry of the schema documents and their compiled wire models.

Like ``referencing.Registry``: a frozen record with a tiny surface, built once and passed
to what needs it; :meth:`Registry.with_resource` returns a new registry with one more
schema file (a candidate version), never changes this one. Which versions are released is
what the registry's ``index.json`` lists; a schema file of a version it does not list is a
*candidate*: known (it can be read and written at), never the default.

Every model is compiled when the registry is built, so a registry never changes after it
is made and a switch of folder or version is another registry, never a cleared cache.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from refitwire._wire._basics import parse_version, version_key
from refitwire._wire._errors import SchemaFolderError
from refitwire._wire._model import WireModel, compile_model

__all__ = ["Registry", "SchemaFolderError", "unreleased_files"]

#: What a ``schema/`` folder holds, said with every error about one.
_LAYOUT = "a schema folder holds index.json, SPEC.md and one folder of schema files per document"


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise SchemaFolderError(f"{path}: missing ({_LAYOUT})") from None
    except OSError as exc:
        raise SchemaFolderError(f"{path}: cannot be read ({exc.strerror})") from None


def _json(path: Path) -> Any:
    try:
        return json.loads(_read(path))
    except ValueError as exc:  # JSONDecodeError, or bytes that are not UTF-8
        where = f" at line {exc.lineno} column {exc.colno}" if isinstance(exc, json.JSONDecodeError) else ""
        raise SchemaFolderError(f"{path}: not JSON{where} ({getattr(exc, 'msg', exc)})") from None


def _text(path: Path) -> str:
    try:
        return _read(path).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SchemaFolderError(f"{path}: not UTF-8 (byte {exc.start})") from None


def unreleased_files(folder: Path, released: Iterable[str], document: str) -> tuple[str, ...]:
    """Versions of ``document`` with a schema file in ``folder`` (a ``schema/`` folder) that are
    not in ``released``: the candidates, in version order."""
    known = set(released)
    found = [
        p.stem for p in (folder / document).glob("*.json") if parse_version(p.stem) and p.stem not in known
    ]
    return tuple(sorted(found, key=version_key))


@dataclass(frozen=True, eq=False)
class Registry:
    """The schema files of one ``schema/`` folder (released versions and candidates) and their
    compiled models. Build it with :meth:`from_folder`; extend it with :meth:`with_resource`."""

    # The record is frozen and its mappings read-only; the JSON documents it holds are shared,
    # as ``referencing`` shares a resource's contents: never change them.
    folder: Path  # where the files were read (``schema_bytes`` reads exact bytes from here)
    index: dict[str, Any] = field(repr=False)  # ``index.json``: the released files with their sha256
    schemas: Mapping[tuple[str, str], dict[str, Any]] = field(repr=False)  # (document, version) -> file
    models: Mapping[tuple[str, str], WireModel] = field(repr=False)  # (document, version) -> its model
    # SPEC.md of the folder: its rules, limits and dtype sizes are part of each released version
    # (``refitwire.wire.spec_rules`` parses it)
    spec_text: str = field(repr=False)
    released: tuple[str, ...] = ()  # the versions the index lists, in order (derived when built)
    candidates: Mapping[str, tuple[str, ...]] = field(
        default_factory=dict, repr=False
    )  # document -> the rest

    @classmethod
    def from_folder(cls, folder: Path) -> Registry:
        """Every schema file of ``folder``'s documents (the ones its ``index.json`` names)."""
        folder = folder.resolve()
        if not folder.is_dir():
            raise SchemaFolderError(f"{folder}: no such folder ({_LAYOUT})")
        index = _json(folder / "index.json")
        entries = index.get("documents") if isinstance(index, dict) else None
        if not isinstance(entries, dict) or not all(isinstance(e, list) and e for e in entries.values()):
            raise SchemaFolderError(
                f'{folder / "index.json"}: no "documents" object listing each one\'s versions'
            )
        spec_text = _text(folder / "SPEC.md")
        released = cls._released(index)
        schemas: dict[tuple[str, str], dict[str, Any]] = {}
        for document, listed in entries.items():
            mine = {entry["version"] for entry in listed}
            for version in (*released, *unreleased_files(folder, released, document)):
                path = folder / document / f"{version}.json"
                if path.is_file() or version in mine:  # a file the index lists must be there
                    schemas[(document, version)] = _json(path)
        return cls._built(folder, index, spec_text, schemas, {})

    @classmethod
    def _built(
        cls,
        folder: Path,
        index: dict[str, Any],
        spec_text: str,
        schemas: Mapping[tuple[str, str], dict[str, Any]],
        models: Mapping[tuple[str, str], WireModel],
    ) -> Registry:
        first = cls._released(index)[0]
        compiled = {
            key: models.get(key) or compile_model(schema, key[0], first) for key, schema in schemas.items()
        }
        ordered = sorted(schemas, key=lambda key: (key[0], version_key(key[1])))
        released = cls._released(index)
        candidates = {
            d: tuple(v for k, v in ordered if k == d and v not in released) for d in index["documents"]
        }
        return cls(
            folder,
            index,
            MappingProxyType({key: schemas[key] for key in ordered}),
            MappingProxyType({key: compiled[key] for key in ordered}),
            spec_text,
            released,
            MappingProxyType(candidates),
        )

    def with_resource(self, document: str, version: str, schema: dict[str, Any]) -> Registry:
        """A new registry that also holds ``schema`` as ``document`` at ``version`` (a candidate
        unless the index lists it); this one is unchanged. The models already compiled are shared."""
        if document not in self.index["documents"]:
            raise ValueError(f"unknown document {document!r} (known: {', '.join(self.index['documents'])})")
        version_key(version)
        schemas = {**self.schemas, (document, version): schema}
        models = {key: model for key, model in self.models.items() if key != (document, version)}
        return self._built(self.folder, self.index, self.spec_text, schemas, models)

    def with_candidates(self, folder: Path) -> Registry:
        """A new registry that also holds every schema file of ``folder`` (a ``schema/`` folder)
        whose version this registry does not release: the candidates a checkout proposes."""
        out = self
        for document in self.index["documents"]:
            for version in unreleased_files(folder, self.released_versions(), document):
                out = out.with_resource(document, version, _json(folder / document / f"{version}.json"))
        return out

    # -- what it holds ----------------------------------------------------------------------

    @staticmethod
    def _released(index: dict[str, Any]) -> tuple[str, ...]:
        found = {entry["version"] for entries in index["documents"].values() for entry in entries}
        return tuple(sorted(found, key=version_key))

    @property
    def documents(self) -> tuple[str, ...]:
        return tuple(self.index["documents"])

    def released_versions(self) -> tuple[str, ...]:
        return self.released

    def candidate_versions(self, document: str = "rendezvous") -> tuple[str, ...]:
        return self.candidates.get(document, ())

    def known_versions(self, document: str = "rendezvous") -> tuple[str, ...]:
        """Released versions, then candidates."""
        return (*self.released_versions(), *self.candidate_versions(document))

    def _unknown(self, document: str, version: str) -> ValueError:
        if document not in self.index["documents"]:
            return ValueError(f"unknown document {document!r} (known: {', '.join(self.index['documents'])})")
        known = ", ".join(self.known_versions(document))
        return ValueError(f"unknown spec version {version!r} (known: {known})")

    def load_schema(self, document: str, version: str) -> dict[str, Any]:
        """The schema of ``document`` at ``version`` as the file says (shared: never change it)."""
        found = self.schemas.get((document, version))
        if found is None:
            raise self._unknown(document, version)
        return found

    def wire_model(self, document: str, version: str) -> WireModel:
        """The compiled model of ``document`` at ``version``."""
        found = self.models.get((document, version))
        if found is None:  # one lookup on the readers' hot path; the reason only when it fails
            raise self._unknown(document, version)
        return found

    def newest_model(self, document: str = "rendezvous") -> WireModel:
        """The model of the newest known version (the library's models hold every member it has)."""
        later = self.candidate_versions(document)
        return self.wire_model(document, later[-1] if later else self.released[-1])
