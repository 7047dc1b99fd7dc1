"""The manifest index read by DuckDB (a process that has loaded it: a query's) and by pyarrow (any other) gives
the same loaded index, and both rebuild one they cannot read or of another layout (issue 24: a query's first
read of the index imports no ``pyarrow.parquet``)."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from _fleet_helpers import SAMPLES, fresh_copy, two_cec_dataset
from app.dataset import index as idxmod
from app.dataset.index import INDEX_NAME, ManifestIndex


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    from app.dataset import Dataset

    root = two_cec_dataset(tmp_path_factory.mktemp("readers") / "ds")
    d = Dataset(root)
    assert d.index.sound() and d.save_index() and (root / "manifest" / INDEX_NAME).is_file()
    return root


@pytest.fixture
def ds(pristine, tmp_path):
    return fresh_copy(pristine, tmp_path)


def _load(root, monkeypatch, duck: bool) -> ManifestIndex:
    monkeypatch.setattr(idxmod, "_duckdb_loaded", lambda: duck)
    if duck:
        import duckdb  # noqa: F401 - the reader's own import
    return ManifestIndex(root)


def _answers(idx: ManifestIndex) -> dict:
    return {"sound": sorted(idx.sound()), "readable": idx.n_readable(), "counters": sorted(idx.counters()),
            "damaged": sorted(idx.damaged()), "dirty": idx.dirty,
            "parts": {t: sorted(idx.part_rows(t)) for t in ("samples", "intervals", "partitions")},
            "keys": {t: sorted(idx.keys(t)) for t in ("samples", "intervals")}, "listed": sorted(idx.listed()),
            "pruned": sorted(idx.part_rows("intervals", {"3931-123F5"}, {"2026-11"}))}


def test_both_readers_load_the_same_index(ds, monkeypatch):
    by_arrow = _answers(_load(ds.root, monkeypatch, False))
    by_duck = _answers(_load(ds.root, monkeypatch, True))
    assert by_duck == by_arrow
    assert not by_duck["dirty"] and len(by_duck["sound"]) == 2 and len(by_duck["parts"]["intervals"]) == 2
    assert by_duck["pruned"] and all(r[3] == "3931-123F5" for r in by_duck["pruned"])


@pytest.mark.parametrize("damage", ["garbage", "cut", "layout", "gone"])
def test_both_readers_rebuild_an_index_they_cannot_use(ds, monkeypatch, damage):
    path = ds.root / "manifest" / INDEX_NAME
    want = _answers(_load(ds.root, monkeypatch, False))
    if damage == "garbage":
        path.write_bytes(b"PAR1 not an index PAR1")
    elif damage == "cut":
        path.write_bytes(path.read_bytes()[:-100])
    elif damage == "layout":          # an index of another layout (a column gone): rebuilt from the entries
        pq.write_table(pq.read_table(path).drop_columns(["body"]), path)
    else:
        path.unlink()
    for duck in (False, True):
        got = _answers(_load(ds.root, monkeypatch, duck))
        assert got["dirty"]                            # read entry by entry; written again by the next save
        assert {k: v for k, v in got.items() if k != "dirty"} == {k: v for k, v in want.items() if k != "dirty"}


def test_entries_added_after_the_index_are_seen_by_both(ds, monkeypatch):
    """An entry file the index does not hold yet (committed by another process) is read from its own file."""
    path = ds.root / "manifest" / INDEX_NAME
    t = pq.read_table(path)
    (e,) = [e for e in ds.entries() if e["name"] == SAMPLES[2].name]
    drop = pa.compute.not_equal(t.column("file"), f"{e['sha256']}.json")
    pq.write_table(t.filter(drop), path)
    want = json.dumps(_answers(_load(ds.root, monkeypatch, False)), default=str)
    assert json.dumps(_answers(_load(ds.root, monkeypatch, True)), default=str) == want
    assert len(_load(ds.root, monkeypatch, True).sound()) == 2


def test_an_index_file_loaded_before_in_the_process_is_not_read_again(ds, monkeypatch):
    from app.dataset import integrity
    from app.dataset import duckdb_engine

    monkeypatch.setattr(integrity, "STAMP_SETTLE_S", 0.0)
    monkeypatch.setattr(idxmod, "_LOADED", {})
    reads: list[str] = []
    real = duckdb_engine.read_parquet_file
    monkeypatch.setattr(duckdb_engine, "read_parquet_file", lambda p, c, **k: reads.append(p) or real(p, c, **k))
    first = _answers(_load(ds.root, monkeypatch, True))
    second = _load(ds.root, monkeypatch, True)
    assert len(reads) == 1 and _answers(second) == first
    # each index has its own view of which loaded rows are current: one forgetting an entry leaves the other
    name = first["sound"][0]
    second.forget(name)
    third = _load(ds.root, monkeypatch, True)
    assert name not in second.sound() and _answers(third) == first and len(reads) == 1
    # an index written again (a new file put in place, as save() does) is read again
    path = ds.root / "manifest" / INDEX_NAME
    t = pq.read_table(path)
    pq.write_table(t.slice(0, t.num_rows), path.with_name(".tmp-index"))
    (path.with_name(".tmp-index")).replace(path)
    assert _answers(_load(ds.root, monkeypatch, True)) == first and len(reads) == 2
