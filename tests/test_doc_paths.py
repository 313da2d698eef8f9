"""Every path of the checkout a page names in code quotes is there.

Modules move (compat/'s subpackages, the one internal API): a page that still sends a reader to
the old place is wrong without any test failing. Each `` `folder/...` `` quote of a page that
starts with one of the checkout's folders must name a file or folder that exists (a module's
attribute after ``.py``, or ``module.attribute`` for ``module.py``, is allowed; a glob must match
something). Paths a user creates, not the checkout, are listed below with the reason.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted(
    {
        ROOT / "README.md",
        ROOT / "tests" / "README.md",
        ROOT / "compat" / "IMPLEMENTERS.md",
        ROOT / "fuzz" / "README.md",
        ROOT / "schema" / "SPEC.md",
        ROOT / "schema" / "vectors" / "README.md",
        *(ROOT / "docs").glob("*.md"),
    }
)
FOLDERS = ("reference", "compat", "gate", "cli", "tools", "tests", "bench", "schema", "docs", "fuzz")
QUOTED = re.compile(rf"`((?:{'|'.join(FOLDERS)})/[\w/.*-]+)")
#: Named on purpose though the checkout lacks them.
NOT_IN_THE_CHECKOUT = {
    "schema/gate-baseline.json": "the accepted-breaks file a repository writes when it first needs one",
    "gate/up_proj": "a tensor's name in a layout, not a path",
}


def named_paths(page: Path) -> list[tuple[int, str]]:
    return [
        (number, match.group(1).rstrip("."))
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        for match in QUOTED.finditer(line)
    ]


def exists(path: str) -> bool:
    if "*" in path:
        return any(ROOT.glob(path))
    path = re.sub(r"(\.py)\..*$", r"\1", path)  # a module's attribute
    module = re.sub(r"\.\w+$", "", path)  # module.attribute for module.py
    return any((ROOT / p).exists() for p in (path, f"{path}.py", f"{module}.py"))


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_path_a_page_names_is_there(page: Path) -> None:
    missing = [
        f"line {n}: {p}" for n, p in named_paths(page) if p not in NOT_IN_THE_CHECKOUT and not exists(p)
    ]
    assert missing == [], f"{page.relative_to(ROOT)} names paths the checkout lacks (moved?)"


def test_the_scan_finds_the_pages_paths_and_a_moved_one() -> None:
    named = {p for page in PAGES for _, p in named_paths(page)}
    assert len(named) > 50 and "compat/IMPLEMENTERS.md" in named
    assert not exists("compat/_values.py") and exists("compat/cases/_cases.member_values")
