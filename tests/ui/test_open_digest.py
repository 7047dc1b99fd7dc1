"""The content digest that notices a file opened twice under another name is taken only for files whose size
another open (or loading) file has: two files of different sizes cannot hold the same bytes (issue 11: hashing
the month's 564 MB beside its decode delayed its first table by 0.2-0.5 s)."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from app.analysis import reading
from app.ui import loader, workers
from tests.ui.conftest import wait_loaded


@pytest.fixture
def hashed(monkeypatch):
    """Names of the files whose digest was taken (by a read job or by the controller)."""
    seen: list[str] = []
    real = workers.file_digest

    def counting(path, cancel=None):
        seen.append(Path(path).name)
        return real(path, cancel)
    monkeypatch.setattr(reading, "file_digest", counting)   # a read job's (app.analysis.reading.read_one)
    monkeypatch.setattr(workers, "file_digest", counting)
    monkeypatch.setattr(loader, "file_digest", counting)    # the controller's, comparing two files of one size
    return seen


def test_files_of_other_sizes_are_not_hashed(qtbot, window, smf_a, smf_b, hashed):
    assert Path(smf_a).stat().st_size != Path(smf_b).stat().st_size
    window.open_files([smf_a, smf_b])
    wait_loaded(qtbot, window)
    assert hashed == []
    assert len(window.ws.files) == 2


def test_same_content_under_another_name_is_still_noticed(qtbot, window, tmp_path, smf_a, hashed):
    window.open_files([smf_a])
    wait_loaded(qtbot, window)
    copy = tmp_path / "copy.gz"
    copy.write_bytes(Path(smf_a).read_bytes())
    window.open_files([str(copy)])
    wait_loaded(qtbot, window)
    assert "already open" in window.statusBar().currentMessage()
    assert len(window.ws.files) == 1
    # the copy's digest beside its read, the first file's when the two were compared: each once
    assert sorted(hashed) == sorted(["copy.gz", Path(smf_a).name])


def test_same_size_other_content_both_open(qtbot, window, tmp_path, smf_a, hashed):
    """Two files of one size but other bytes (gzip headers differing only in their mtime field): both are read."""
    raw = gzip.decompress(Path(smf_a).read_bytes())
    a, b = tmp_path / "a.gz", tmp_path / "b.gz"
    a.write_bytes(gzip.compress(raw, mtime=1))
    b.write_bytes(gzip.compress(raw, mtime=2))
    assert a.stat().st_size == b.stat().st_size and a.read_bytes() != b.read_bytes()
    window.open_files([str(a)])
    wait_loaded(qtbot, window)
    window.open_files([str(b)])
    wait_loaded(qtbot, window)
    assert "already open" not in window.statusBar().currentMessage()
    assert len(window.ws.files) == 2
    assert sorted(hashed) == ["a.gz", "b.gz"]
