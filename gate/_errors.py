"""The gate's one exception: a usage or input error (exit code 1), never a verdict."""

from __future__ import annotations


class GateError(Exception):
    """Bad input to the gate: a malformed schema, a broken git ref, an unreadable baseline.

    ``source`` names what was bad (a file, ``REF:path`` or a ref) and leads the message.
    """

    def __init__(self, source: str, detail: str) -> None:
        self.source, self.detail = source, detail
        super().__init__(f"{source}: {detail}")

    def __reduce__(self) -> tuple[type[GateError], tuple[str, str]]:  # picklable: built from both parts
        return type(self), (self.source, self.detail)
