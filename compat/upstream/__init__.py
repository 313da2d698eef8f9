"""The released ``modelexpress`` packages, run as compat-matrix testees.

Each released version lives in its own virtual environment (:mod:`.envs`), and
``adapter_testee.py`` is a stdlib-only script that runs *inside* such an
environment and speaks the matrix's JSON-lines testee protocol by calling that
release's own ``wrap_rendezvous_blob`` / ``unwrap_rendezvous_blob`` and
``verify.tensor_digest``.

Building an environment downloads packages; nothing here builds one on import.
Build them explicitly with ``python -m refitwire.compat.upstream.envs``.
"""

from __future__ import annotations

from pathlib import Path

#: The adapter script, to be run with an upstream environment's python.
ADAPTER_SCRIPT = Path(__file__).with_name("adapter_testee.py")
#: The one builder of upstream's shard table objects from the decoded form (stdlib only), for
#: the other scripts that run in an upstream environment (``runpy.run_path`` it there).
UPSTREAM_OBJECTS = Path(__file__).with_name("upstream_objects.py")

__all__ = ["ADAPTER_SCRIPT", "UPSTREAM_OBJECTS"]
