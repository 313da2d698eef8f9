"""The refit's choices the CLI lists: misbehaviours to inject, NIXL progress modes (no torch, no NIXL)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CLI_INJECTIONS", "HOSTILE", "INJECTIONS", "PROGRESS_MODES", "UpstreamWriter"]

#: Hostile or broken tables a publisher can post instead of its true one.
HOSTILE = (
    "overlap",  # its split shard grows one slice into a neighbour's box
    "out-of-bounds",  # its split shard's box runs past full_shape
    "rank-mismatch",  # a shard with one dimension too many
    "gap",  # its split shard shrinks by one slice
    "disagree",  # it claims a different full_shape than the other ranks
    "foreign-agent",  # a shard claims memory of another agent
    "unregistered-addr",  # a shard's address lies outside what it registered
)
#: Every publisher injection: data/table mismatches first, then the hostile tables.
INJECTIONS = ("stale", "corrupt", "no-digest", "no-stamp", *HOSTILE)
#: What ``--inject`` accepts: every publisher injection, a killed publisher, and
#: ``hostile-table`` as the short name of the ``overlap`` table.
CLI_INJECTIONS = (*INJECTIONS, "kill-publisher", "hostile-table")

#: How a NIXL agent's UCX worker is progressed:
#: ``poll``: NIXL's progress thread sleeps in ``poll()`` on the worker's event fd and wakes
#: for each event (and every ``_nixl.POLL_WAKE_US`` regardless, NIXL's guard against a
#: missed wakeup);
#: ``spin``: the same thread with the delay NIXL's Python wrapper sets, 0, so it never sleeps;
#: ``off``: no thread; the owner progresses by polling its transfers or ``Agent.progress``.
PROGRESS_MODES = ("poll", "spin", "off")


@dataclass(frozen=True)
class UpstreamWriter:
    """Released upstream code that writes a publisher's blobs: the python of its environment and
    the builder of its shard table objects. The caller names the builder (the kit's
    ``refitwire.compat.upstream.UPSTREAM_OBJECTS``), so the refit never imports the kit."""

    python: str
    objects: str

    def argv(self) -> list[str]:
        """The publisher's flags that hand it over (see ``_publisher.main``)."""
        return ["--upstream-python", self.python, "--upstream-objects", self.objects]
