"""``python -m refitwire``: the same as the ``refitwire`` command."""

from refitwire.cli import main

raise SystemExit(main())
