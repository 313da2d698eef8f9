"""The gate's exceptions: bad input (exit 1, one line on stderr), never a verdict, and a reader
of the kit that crashed, never a "rejected" or a "no witness".

A mistake on the command line itself is the CLI's usage error (``refitwire.cli.USAGE_EXIT``), not these.
"""

from __future__ import annotations


class GateError(Exception):
    """Bad input to the gate: a malformed schema, a broken git ref, an unreadable baseline.

    ``source`` names what was bad (a file, ``REF:path`` or a ref) and leads the message.
    """

    def __init__(self, source: str, detail: str) -> None:
        self.source, self.detail = source, detail
        super().__init__(f"{source}: {detail}")

    def __reduce__(self) -> tuple[type[GateError], tuple[str, str]]:
        # Rebuilt from the fields (the default passes the message alone, which __init__ cannot take).
        return type(self), (self.source, self.detail)


class ReaderCrash(RuntimeError):
    """A reader raised instead of answering: a bug in the kit, never "rejected" or "no witness"."""
