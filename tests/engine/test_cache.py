"""The workspace cache (app/cache/): same results as decoding, never trusted when the file or reader changed,
safe against a deleted, corrupt or full cache; the intervals cache of the Workspace; ``nestscope cache``."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pandas as pd
import pytest

from app import cache as wc
from app.engine import Workspace
from app.formats import read_file as decode

SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "samples"
SMF = "after_z16_ZOSB_smf113.vbs.gz"          # 0.3 MB, 2 days of one LPAR
MON = "after_VMSYS1_monwrite.mondata.gz"      # MONWRITE: partitions and MT frames too


@pytest.fixture
def files(tmp_path):
    d = tmp_path / "data"
    d.mkdir()
    for name in (SMF, MON):
        shutil.copy(SAMPLES / name, d / name)
    return d


@pytest.fixture
def cache(tmp_path):
    return wc.Cache(tmp_path / "cache")


def _same(a, b):
    """Two read results carry the same data (frames column by column, dtypes included)."""
    pd.testing.assert_frame_equal(a.samples, b.samples)
    assert a.findings == b.findings
    assert (a.file, a.kind, a.framing, a.records, a.size) == (b.file, b.kind, b.framing, b.records, b.size)
    for name in ("partitions", "mt"):
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None) == (y is None)
        if x is not None:
            pd.testing.assert_frame_equal(x, y)


def _entries(cache, kind="read"):
    return sorted(p for p in cache.dir.iterdir() if p.name.startswith(f"{kind}-"))


@pytest.mark.parametrize("name", [SMF, MON])
def test_second_read_comes_from_the_cache_and_is_identical(files, cache, name):
    path = files / name
    fresh = wc.read_file(path, cache=cache)
    assert type(fresh).__name__ == "ReadResult" and fresh.meta["cache_key"]
    assert len(_entries(cache)) == 1
    hit = wc.read_file(path, cache=cache)
    assert isinstance(hit, wc.CachedReadResult)
    assert hit.readable
    _same(hit, decode(path))
    assert hit.meta["cache_key"] == fresh.meta["cache_key"]


def test_pandas_dtypes_survive_parquet(files, cache):
    path = files / SMF
    wc.read_file(path, cache=cache)
    s = wc.read_file(path, cache=cache).samples
    assert str(s["system"].dtype) == "category" and str(s["time"].dtype) == "datetime64[ns]"
    assert str(s["B0"].dtype) == "uint64" and str(s["cpu"].dtype) == "int32"
    # category labels stay python-stored strings (app pins the storage; pyarrow would otherwise switch it)
    assert s["system"].cat.categories.dtype.storage == "python"


def test_changed_file_is_never_trusted(files, cache):
    path = files / SMF
    first = wc.read_file(path, cache=cache)
    # same size, one second newer: the entry no longer matches the file
    st = os.stat(path)
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    again = wc.read_file(path, cache=cache)
    assert not isinstance(again, wc.CachedReadResult)
    # content replaced by another file (size changes): the new content is what is read
    shutil.copy(SAMPLES / "before_z15_ZOSB_smf113.rdw.gz", path)
    other = wc.read_file(path, cache=cache)
    assert not isinstance(other, wc.CachedReadResult)
    assert set(other.samples["machine_type"].astype(str)) == {"8561"}       # the z15 file, not the z16 one
    assert set(first.samples["machine_type"].astype(str)) == {"3931"}
    assert len(_entries(cache)) == 1           # the stale entries of that path were removed


def test_reader_version_change_is_a_miss(files, cache, monkeypatch):
    path = files / SMF
    wc.read_file(path, cache=cache)
    monkeypatch.setitem(wc._versions, "formats", "another-reader")
    assert not isinstance(wc.read_file(path, cache=cache), wc.CachedReadResult)


def test_deleted_cache(files, cache):
    path = files / SMF
    wc.read_file(path, cache=cache)
    shutil.rmtree(cache.dir)
    res = wc.read_file(path, cache=cache)
    assert not isinstance(res, wc.CachedReadResult)
    _same(res, decode(path))
    # deleted between the (lazy) hit and the first use of the samples: decoded again, same frame
    hit = wc.read_file(path, cache=cache)
    assert isinstance(hit, wc.CachedReadResult)
    shutil.rmtree(cache.dir)
    pd.testing.assert_frame_equal(hit.samples, decode(path).samples)


def test_corrupt_cache_files(files, cache):
    path = files / SMF
    wc.read_file(path, cache=cache)
    (entry,) = _entries(cache)
    (entry / "entry.json").write_text("{not json", encoding="utf-8")
    res = wc.read_file(path, cache=cache)
    assert not isinstance(res, wc.CachedReadResult)
    assert not entry.exists() or json.loads((entry / "entry.json").read_text())   # removed, then stored again
    # a damaged Parquet file: the hit decodes the file again and the entry is removed
    (entry,) = _entries(cache)
    hit = wc.read_file(path, cache=cache)
    (entry / "samples.parquet").write_bytes(b"PAR1 garbage")
    pd.testing.assert_frame_equal(hit.samples, decode(path).samples)
    assert not entry.exists()
    # a damaged partitions frame is found on the hit itself: a miss
    mon = files / MON
    wc.read_file(mon, cache=cache)
    (mentry,) = [e for e in _entries(cache) if json.loads((e / "entry.json").read_text())["path"].endswith(MON)]
    (mentry / "partitions.parquet").write_bytes(b"\0" * 100)
    assert not isinstance(wc.read_file(mon, cache=cache), wc.CachedReadResult)


def test_full_cache_drops_least_recently_used(files, cache, tmp_path):
    a, b = files / SMF, files / "b.vbs.gz"
    shutil.copy(files / SMF, b)
    wc.read_file(a, cache=cache)
    (ea,) = _entries(cache)
    one = sum(p.stat().st_size for p in ea.iterdir())
    small = wc.Cache(cache.dir, max_bytes=int(one * 1.5))       # room for one entry of this size, not two
    wc.read_file(b, cache=small)
    names = [json.loads((e / "entry.json").read_text())["path"] for e in _entries(small)]
    assert names == [str(b.resolve())]
    # an entry bigger than the whole cap is not stored at all; the read still works
    tiny = wc.Cache(tmp_path / "tiny", max_bytes=1000)
    res = wc.read_file(a, cache=tiny)
    assert len(res.samples) and not _entries(tiny) and "cache_key" not in res.meta


def test_cache_off(files, monkeypatch):
    monkeypatch.setenv("NESTSCOPE_CACHE", "0")
    assert wc.default_cache() is None
    res = wc.read_file(files / SMF)
    assert "cache_key" not in res.meta


def test_workspace_intervals_cached(files, cache):
    paths = [files / SMF, files / MON]
    ws1 = Workspace(cache=cache)
    ws1.add_all([wc.read_file(p, cache=cache) for p in paths])
    assert len(_entries(cache, "iv")) == 1
    ws2 = Workspace(cache=cache)
    hits = [wc.read_file(p, cache=cache) for p in paths]
    ws2.add_all(hits)
    pd.testing.assert_frame_equal(ws2.intervals, ws1.intervals)
    assert ws2.findings == ws1.findings
    pd.testing.assert_frame_equal(ws2.metrics("interval", summary=True), ws1.metrics("interval", summary=True))
    # the intervals came from the cache: the samples of the hits were never read
    assert all("_samples" not in h.__dict__ or h.__dict__["_samples"] is wc._LAZY for h in hits)
    # other formula sets (here: another version string) are another key
    sets = {g: fs for g, fs in ws1.formula_sets.items()}
    import copy
    sets = {g: copy.copy(fs) for g, fs in sets.items()}
    sets["z16"].version = "z16 / test"
    ws3 = Workspace(cache=cache, formula_sets=sets)
    ws3.add_all([wc.read_file(p, cache=cache) for p in paths])
    assert set(ws3.intervals["formula_set"].astype(str)) >= {"z16 / test"}
    assert len(_entries(cache, "iv")) == 2


def test_samples_read_back_from_the_cache_are_let_go_once_the_intervals_are_computed(files, cache):
    # intervals computed from a cached read's samples (the intervals' own entry gone: another formula file, or
    # evicted): the samples were read from the cache's Parquet; held beside the intervals they doubled a month's
    # memory (250 MB each) for the rest of the process, so the workspace lets them go; they are read again from
    # the cache when asked for, the same frame
    paths = [files / SMF, files / MON]
    for p in paths:
        wc.read_file(p, cache=cache)                       # the read entries
    ref = Workspace(cache=False)
    ref.add_all([decode(p) for p in paths])
    hits = [wc.read_file(p, cache=cache) for p in paths]
    assert all(isinstance(h, wc.CachedReadResult) for h in hits)
    ws = Workspace(cache=cache)
    ws.add_all(hits)
    pd.testing.assert_frame_equal(ws.intervals, ref.intervals)
    assert all(h.__dict__.get("_samples") is wc._LAZY for h in hits)          # let go
    for h, p in zip(hits, paths):
        pd.testing.assert_frame_equal(h.samples, decode(p).samples)          # read again: the same
    assert hits[0].forget_samples() and not hits[0].forget_samples()        # let go once; nothing held then
    hits[0].samples = decode(paths[0]).samples                               # given, not read from the cache:
    assert not hits[0].forget_samples() and len(hits[0].samples)            # kept


def test_cache_command(files, monkeypatch, capsys, tmp_path):
    from app.cli import main

    monkeypatch.setenv("NESTSCOPE_CACHE", "1")
    monkeypatch.setenv("NESTSCOPE_CACHE_DIR", str(tmp_path / "c"))
    assert main(["report", str(files / SMF), "--by", "lpar"]) == 0
    capsys.readouterr()
    assert main(["cache", "info", "--format", "json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["entries"] == 2            # the decoded file and its intervals
    assert {it["kind"] for it in info["items"]} == {"read", "iv"}
    assert main(["cache", "clear"]) == 0
    assert "removed 2 entries" in capsys.readouterr().out
    assert main(["cache", "info"]) == 0
    assert "entries: 0" in capsys.readouterr().out


def _flat(nodes):
    out = []
    for n in nodes:
        out.append((n.key, n.label, n.info))
        out.extend(_flat(n.children))
    return out


def test_tree_from_the_cache_is_the_same_tree(files, cache):
    paths = [files / SMF, files / MON]
    ws1 = Workspace(cache=cache)
    ws1.add_all([wc.read_file(p, cache=cache) for p in paths])
    fresh = _flat(ws1.tree())
    # the tree's whole-window metrics were stored, one entry per level (cec, lpar, class, cpu_window): the window
    # builds the tree's deeper levels in a later job (issue 11) and asks for any set of them (issue 23), and the
    # CEC pools' and SMT cores' rows (issue 26): six
    names = sorted(p.name.rsplit("-", 1)[1] for p in _entries(cache, "wm"))
    assert names == sorted(["cec", "lpar", "class", "cpu_window", "pool", "core"])
    ws2 = Workspace(cache=cache)
    ws2.add_all([wc.read_file(p, cache=cache) for p in paths])
    again = _flat(ws2.tree())
    assert again == fresh
    for lv, m in ws1.window_metrics().items():
        pd.testing.assert_frame_equal(ws2.window_metrics()[lv], m)
    # without the cache the tree is the same too
    ws3 = Workspace(cache=False)
    ws3.add_all([decode(p) for p in paths])
    assert _flat(ws3.tree()) == fresh


def test_big_frames_written_in_slices_read_back_identical(files, cache, monkeypatch):
    # frames over _CHUNK_ROWS rows are converted to Arrow slice by slice (memory); here with 500-row slices
    monkeypatch.setattr(wc.entry, "_CHUNK_ROWS", 500)
    for name in (SMF, MON):
        path = files / name
        fresh = wc.read_file(path, cache=cache)
        assert len(fresh.samples) > 1000          # several slices
        _same(wc.read_file(path, cache=cache), decode(path))
