"""Without NIXL every refit test module is skipped with a reason, never an error at collection.

NIXL's wrapper raises a plain ImportError when the package is missing; pytest 9
deprecates treating that as a skip (the warning is made an error here, as the next
pytest does), so each module must say it expects an ImportError.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
# Every module that imports NIXL at all, found by its text: one added later is held to this too.
NEEDS_NIXL = sorted(
    p.name
    for p in HERE.glob("test_*.py")
    if re.search(r'importorskip\(\s*"refitwire\.refit\._nixl"', p.read_text())
)


def test_every_nixl_module_skips_with_its_reason_when_nixl_is_missing(tmp_path: Path) -> None:
    # The search finds them (an empty list would run the whole suite instead).
    assert {"test_refit.py", "test_redis_refit.py", "test_steps.py", "test_netns_redis.py"} <= set(NEEDS_NIXL)
    for name in ("nixl", "nixl_cu12"):  # shadow both names the wrapper tries
        (tmp_path / f"{name}.py").write_text('raise ImportError("NIXL blocked for this test")\n')
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-rs",
         "-W", "error::pytest.PytestDeprecationWarning", *(str(HERE / n) for n in NEEDS_NIXL)],
        capture_output=True, text=True, timeout=300, env=env, cwd=HERE.parent.parent,
    )  # fmt: skip
    # 5: no test ran, every module was skipped (an error at collection exits 2).
    assert done.returncode == 5, done.stdout[-3000:] + done.stderr[-2000:]
    assert f"{len(NEEDS_NIXL)} skipped" in done.stdout
    assert done.stdout.count("needs NIXL (the refit extra)") == len(NEEDS_NIXL)
