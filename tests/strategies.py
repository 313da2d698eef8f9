"""Hypothesis strategies for well-formed payloads as models: the matrix's own generator
(valid geometry, every optional member, addresses near 2^64), turned into models."""

from __future__ import annotations

from refitwire import PublishedTensor, from_decoded, wire
from refitwire.compat.cases._cases import decoded_payloads, decoded_tensors

tensors = decoded_tensors(wire.default_registry()).map(PublishedTensor.model_validate)


def _wrap_arguments(decoded: dict) -> dict:  # type: ignore[type-arg]
    p = from_decoded(decoded)
    return {
        "agent_metadata": p.agent_metadata,
        "agent_name": p.agent_name,
        "metadata_endpoint": p.metadata_endpoint,
        "tensors": p.tensors,
        "publisher_step": p.publisher_step,
    }


payloads = decoded_payloads(wire.default_registry()).map(_wrap_arguments)
