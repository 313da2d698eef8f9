"""What one refit step did, as the receiver reports it (and the JSON row the run report keeps)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ._errors import RefitError
from ._verdict import ShardVerdict

__all__ = ["StepResult"]


@dataclass
class StepResult:
    """What one refit step did. ``error`` is set when it stopped before verdicts.

    Times, in seconds: ``discover_s`` (polling the store until the quorum is
    there, then decoding each blob once; ``decode_s`` of it is the decoding),
    ``check_s`` (the checks and the plan; next to nothing when ``plan_reused``),
    ``transfer_s`` (first read posted to last byte landed), ``verify_s`` (the
    digests still running after the last byte landed), ``install_s`` and
    ``total_s`` (discover to install).
    """

    step: int
    installed: bool
    weights_step: int | None
    verdicts: list[ShardVerdict] = field(default_factory=list)
    error: RefitError | None = None
    wire_bytes: int = 0
    exact_bytes: int = 0
    exact_runs: int = 0
    transfer_s: float = 0.0
    total_s: float = 0.0
    discover_s: float = 0.0
    decode_s: float = 0.0
    polls: int = 0
    check_s: float = 0.0
    plan_reused: bool = False
    tables_reused: int = 0  # tables of the quorum this receiver had decoded before, unchanged
    blobs_fetched: int = 0  # blobs read from the store in this step's polls (the rest were vouched for)
    verify_s: float = 0.0
    install_s: float = 0.0

    @property
    def bytes_per_s(self) -> float:
        return self.wire_bytes / self.transfer_s if self.transfer_s > 0 else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "installed": self.installed,
            "weights_step": self.weights_step,
            "error": None if self.error is None else {"rule": self.error.rule, "message": str(self.error)},
            "verdicts": [
                {
                    "tensor": v.tensor,
                    "offset": list(v.offset),
                    "shape": list(v.shape),
                    "agent": v.agent,
                    "publisher_step": v.publisher_step,
                    "published_digest": v.published_digest,
                    "actual_digest": v.actual_digest,
                    "verdict": v.verdict.value,
                }
                for v in self.verdicts
            ],
            "wire_bytes": self.wire_bytes,
            "exact_bytes": self.exact_bytes,
            "exact_runs": self.exact_runs,
            "transfer_s": self.transfer_s,
            "total_s": self.total_s,
            "bytes_per_s": self.bytes_per_s,
            "wall_over_transfer": self.total_s / self.transfer_s if self.transfer_s > 0 else None,
            "phases_s": {
                "discover": self.discover_s,
                "decode": self.decode_s,
                "check": self.check_s,
                "transfer": self.transfer_s,
                "verify": self.verify_s,
                "install": self.install_s,
            },
            "polls": self.polls,
            "plan_reused": self.plan_reused,
            "tables_reused": self.tables_reused,
            "blobs_fetched": self.blobs_fetched,
        }
