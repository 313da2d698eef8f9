"""The cache folder's one writer: a file is there whole or not at all, and a write that fails
leaves nothing behind (two test workers building one table, a full disk)."""

from __future__ import annotations

from pathlib import Path

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
