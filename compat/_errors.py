"""Every exception of the compat kit (its subpackages keep their own): records of what went wrong,
with short messages. A kit that raises one of these never judges the implementation under test by it:
a crash of the kit is an errored run (``KitCrash``), a testee that breaks the protocol an errored case.
"""

from __future__ import annotations

__all__ = ["BaseMismatch", "KitCrash", "ProtocolError", "ReportError", "UnknownVersion", "YardstickFailed"]


class UnknownVersion(ValueError):
    """A participant declared a spec version that is neither released nor a candidate here."""


class BaseMismatch(ValueError):
    """The two reports cannot be compared (another seed or example count, an incomplete base)."""


class ReportError(ValueError):
    """A report line that is not JSON or not a report record (the line number is in the message)."""


class ProtocolError(Exception):
    """A testee broke the protocol (bad JSON, wrong seq, a reply that fails its schema, silence)."""


class KitCrash(Exception):
    """The kit's own code raised while preparing a case (its traceback is the message)."""


class YardstickFailed(KitCrash):
    """The reference reader beside the reader did not start or did not read a table."""
