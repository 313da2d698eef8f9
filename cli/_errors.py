"""The CLI's exceptions: a usage error found after parsing (a flag value the verb cannot use).

The verb reports it as one line and exits ``refitwire.cli.USAGE_EXIT``, like argparse.
"""

from __future__ import annotations

__all__ = ["Usage"]


class Usage(ValueError):
    """A bad flag value (a path that is no source tree, an unreadable list or report): exit 2."""
