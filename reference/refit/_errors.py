"""Why a refit step was refused before or during the transfer. Records with fields, short messages.

Each error pickles and copies by its fields (``__reduce__``), so one raised in a worker
process reaches the parent whole.
"""

from __future__ import annotations

__all__ = ["DiscoveryTimeout", "NixlMissing", "RefitError", "TableRejected", "TransferFailed"]


class RefitError(Exception):
    """A step could not be refit; the receiver's weights are unchanged. ``rule`` is a stable id."""

    rule = "REFIT"


class TableRejected(RefitError):
    """A published table broke ``rule``; caught before any byte moved.

    ``source`` is the store key (or agent) whose table broke it, ``""`` when the
    problem only shows in the merged tables.
    """

    def __init__(self, rule: str, source: str, detail: str) -> None:
        self.rule = rule
        self.source = source
        self.detail = detail
        where = f"{source}: " if source else ""
        tag = "" if detail.endswith(f"[{rule}]") else f" [{rule}]"  # codec and planner errors carry it
        super().__init__(f"{where}{detail}{tag}")

    def __reduce__(self) -> tuple[type[TableRejected], tuple[str, str, str]]:
        return type(self), (self.rule, self.source, self.detail)


class DiscoveryTimeout(RefitError):
    """Fewer than ``expected`` non-empty tables showed up in time."""

    rule = "DISCOVERY_TIMEOUT"

    def __init__(
        self, expected: int, seen: int, readable: int, empty: int, timeout_s: float, store: str = ""
    ) -> None:
        self.expected, self.seen, self.readable, self.empty = expected, seen, readable, empty
        self.timeout_s, self.store = timeout_s, store
        super().__init__(
            f"{store + ': ' if store else ''}{readable - empty} of {expected} non-empty table(s) after "
            f"{timeout_s:g} s: {seen} seen, {readable} readable, {empty} empty [{self.rule}]"
        )

    def __reduce__(self) -> tuple[type[DiscoveryTimeout], tuple[int, int, int, int, float, str]]:
        return type(self), (self.expected, self.seen, self.readable, self.empty, self.timeout_s, self.store)


class TransferFailed(RefitError):
    """NIXL could not load a peer or finish a read (a dead or frozen publisher)."""

    rule = "TRANSFER_FAILED"

    def __init__(self, agents: list[str], detail: str) -> None:
        self.agents = agents
        self.detail = detail
        super().__init__(f"{', '.join(agents) or 'peer'}: {detail} [{self.rule}]")

    def __reduce__(self) -> tuple[type[TransferFailed], tuple[list[str], str]]:
        return type(self), (self.agents, self.detail)


class NixlMissing(ImportError):
    """NIXL itself is not installed (``_nixl`` raises it on import). Tests skip on exactly this,
    so a broken import of our own code fails them instead of skipping them."""
