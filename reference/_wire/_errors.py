"""Every exception of the wire's low layer: a schema folder that cannot be read, a ``$ref`` that
does not resolve. The library's own exceptions (``InvalidBlob`` ...) are in ``refitwire._errors``.
"""

from __future__ import annotations

__all__ = ["RefError", "SchemaFolderError"]


class RefError(ValueError):
    """A ``$ref`` that does not resolve, or a reference cycle."""


class SchemaFolderError(ValueError):
    """A schema folder that cannot be read: a file it must hold is missing, or is not JSON (or
    SPEC.md has a row its parser cannot read). The message names the file and what is wrong."""
