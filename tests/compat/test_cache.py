"""The cache folder's one writer: a file is there whole or not at all, and a write that fails
leaves nothing behind (two test workers building one table, a full disk)."""

from __future__ import annotations

from pathlib import Path

from refitwire.compat import _cache
from refitwire.compat._cache import write_whole


def test_a_file_is_written_whole(tmp_path: Path) -> None:
    target = tmp_path / "deep" / "table.json"
    assert write_whole(target, b"{}") and target.read_bytes() == b"{}"
    assert [p.name for p in target.parent.iterdir()] == ["table.json"]


def test_a_failed_write_leaves_no_temporary_file(tmp_path: Path) -> None:
    target = tmp_path / "table.json"
    (target / "in-the-way").mkdir(parents=True)  # a folder where the file goes: the rename fails
    assert write_whole(target, b"{}") is False
    assert sorted(p.name for p in tmp_path.iterdir()) == ["table.json"]


def test_a_kept_value_is_keyed_by_its_inputs_and_by_the_code_that_makes_it(tmp_path: Path) -> None:
    maker = tmp_path / "maker.py"
    maker.write_text("x = 1\n")
    key = _cache.content_key("1.2.0", "^a$", code=[maker])
    assert key == _cache.content_key("1.2.0", "^a$", code=[maker])
    assert key != _cache.content_key("1.2.0", "^b$", code=[maker])
    assert _cache.content_key("ab", "c") != _cache.content_key("a", "bc")  # parts stay apart
    maker.write_text("x = 2\n")
    assert key != _cache.content_key("1.2.0", "^a$", code=[maker])
    assert _cache.content_key(code=[_cache]) == _cache.content_key(code=[Path(_cache.__file__)])
