"""The narrow query's own time (issue 24): DuckDB's result fetched as arrays (``fetchnumpy``) and the result frame
built once from them gives the frame the ``.df()`` frame gave, cell for cell, dtype for dtype; what a command's
index and stats cache look-ups keep for the next command of the process is not kept past a change."""

from __future__ import annotations

import json
import os

import duckdb
import numpy as np
import pandas as pd
import pytest

from _fleet_helpers import SMF, extracted_smf
from app.cli import main
from app.dataset import Dataset
from app.dataset import duckdb_engine as D
from app.dataset import index as imod
from app.dataset import query as qmod
from app.dataset import stats
from app.dataset.query import QuerySpec, run_query

Z16 = "3931-123F5"


@pytest.fixture(scope="module")
def ds_root(tmp_path_factory):
    return extracted_smf(tmp_path_factory, "arrays")


@pytest.fixture
def one_thread():
    """DuckDB's sums of doubles in one order (one thread): two runs of a statement give the same bits."""
    con = D._database()
    con.execute("SET threads = 1")
    D._release()
    yield
    con.execute("RESET threads")


def _as_frame(monkeypatch):
    """DuckDBEngine.run returning ``.df()``'s frame, as before the arrays (the query then reads the frame)."""
    real = D.DuckDBEngine.run

    def run(self, steps):
        self.arrays = False
        return real(self, steps)
    monkeypatch.setattr(D.DuckDBEngine, "run", run)


@pytest.mark.parametrize("kw", [dict(by="lpar"), dict(by="cec", every="day"), dict(by="class", every="hour"),
                                dict(by="cpu"), dict(by="cpu", every="day"), dict(by="interval"),
                                dict(by="lpar", where=f"cec = '{Z16}'", tz="local"),
                                dict(by="lpar", where="lpar = 'NOPE'")])
def test_arrays_give_the_frame_df_gave(ds_root, one_thread, monkeypatch, kw):
    spec = QuerySpec(**kw)
    got = run_query(Dataset(ds_root), spec)
    with monkeypatch.context() as mp:
        _as_frame(mp)
        want = run_query(Dataset(ds_root), spec)
    assert list(got.columns) == list(want.columns)
    assert got.dtypes.tolist() == want.dtypes.tolist()
    pd.testing.assert_frame_equal(got, want, check_exact=True)
    assert kw.get("where") == "lpar = 'NOPE'" or len(got)


def test_columns_of_fetchnumpy_hold_what_df_holds():
    """NULLs in each kind of column: NaN in a float and a text column, pandas' nullable array in an integer and a
    boolean one (as ``.df()``), the values where none is NULL; the query's conversions give the same arrays."""
    sql = ("SELECT * FROM (VALUES (1::BIGINT, 2.5::DOUBLE, 'a', 7::INTEGER, true, 3::BIGINT), "
           "(NULL, NULL, NULL, NULL, NULL, 4::BIGINT)) t(i, d, s, i32, b, whole)")
    con = duckdb.connect()
    try:
        a, b = qmod._columns(con.execute(sql).fetchnumpy()), qmod._columns(con.execute(sql).df())
    finally:
        con.close()
    assert isinstance(a["whole"], np.ndarray) and a["whole"].tolist() == [3, 4]
    assert np.isnan(a["d"][1]) and a["d"][0] == 2.5
    assert a["s"][0] == "a" and isinstance(a["s"][1], float) and np.isnan(a["s"][1])
    assert str(a["i"].dtype) == "Int64" and str(a["i32"].dtype) == "Int32" and str(a["b"].dtype) == "boolean"
    for c in ("i", "i32"):
        assert qmod._i64(a[c], fill=True).tolist() == [int(a[c][0]), 0] == qmod._i64(b[c], fill=True).tolist()
    for c in ("i", "d", "i32", "whole"):
        assert np.array_equal(qmod._f64(a[c]), qmod._f64(b[c]), equal_nan=True)
        assert np.array_equal(qmod._f64(a[c], 0.0), [float(qmod._f64(a[c])[0]), 0.0 if c != "whole" else 4.0])
    assert [str(v) for v in qmod._obj(a["s"])] == [str(v) for v in qmod._obj(b["s"])] == ["a", "nan"]


def test_few_rows_ordered_as_pandas_orders_them():
    """Times (NaT last), text (None and NaN last) and numbers: the Python sort of a few rows gives
    ``sort_values(kind="stable")``'s positions."""
    t = np.array([3, 1, 0, -2**63, 2], dtype=np.int64).view("datetime64[ns]")      # -2**63: NaT
    s = np.array(["b", None, "a", "b", np.nan], dtype=object)
    n = np.array([0, 1, 1, 0, 1], dtype=np.int64)
    frame = pd.DataFrame({0: s, 1: n, 2: t})
    want = frame.sort_values([0, 1, 2], kind="stable").index.to_numpy()
    assert want.tolist() == [2, 0, 3, 1, 4]     # by hand: a; b (t 3, then NaT); the missing texts by time (1, 2)
    assert qmod._order([s, n, t], 5).tolist() == want.tolist()


def test_index_memos_follow_the_entries(tmp_path, monkeypatch):
    """Part rows, keys and counters kept from the loaded index file are given again only to an index that is that
    file alone: an entry forgotten (or read since) gives its own answer."""
    root = tmp_path / "ds"
    assert main(["extract", *map(str, SMF[:2]), "--to", str(root), "--quiet"]) == 0
    monkeypatch.setattr(imod.integrity, "STAMP_SETTLE_S", 0)    # (a file written a moment ago is kept too)
    first = Dataset(root).index
    rows = first.part_rows("intervals")
    assert rows and first._whole() and first.keys("intervals") and first.counters()
    again = Dataset(root).index
    assert again._bp is first._bp           # the same loaded file: its memos serve
    assert again.part_rows("intervals") == rows and again.keys("intervals") == first.keys("intervals")
    assert again.counters() == first.counters()
    gone = rows[0][0]
    again.forget(gone)
    assert not again._whole()
    left = again.part_rows("intervals")
    assert gone not in {r[0] for r in left} and len(left) < len(rows)
    assert Dataset(root).index.part_rows("intervals") == rows       # a new index of the same file: all of them


def test_stats_cache_read_again_when_it_changes(tmp_path, monkeypatch):
    """The stats cache parsed once per process while it is the same file; a changed one is read again; the copy
    given may be changed without changing what the next caller gets."""
    root = tmp_path / "ds"
    assert main(["extract", str(SMF[0]), "--to", str(root), "--quiet"]) == 0
    path = root / stats.CACHE_NAME
    monkeypatch.setattr(imod.integrity, "STAMP_SETTLE_S", 0)    # (a file written a moment ago is kept too)
    ds = Dataset(root)
    stats._load(ds)
    assert str(path) in stats._LOADED
    got = stats._load(ds)
    cec = next(iter(got))
    got[cec]["sig"] = "changed by the caller"
    assert stats._load(ds)[cec]["sig"] != "changed by the caller"
    doc = json.loads(path.read_text())
    doc["cecs"][cec]["sig"] = "x" * 64
    tmp = path.with_name("new.json")
    tmp.write_text(json.dumps(doc))
    os.replace(tmp, path)
    assert stats._load(ds)[cec]["sig"] == "x" * 64
    assert stats.cached_profile(ds, [cec], None) is None        # its signature no longer matches the parts


def test_first_query_connects_aside(ds_root, monkeypatch):
    """A process's first query makes its database in a thread while it loads the formula sets: the database is
    made once (a second call starts nothing), no engine is left counted open, and the query gives its rows."""
    monkeypatch.setattr(D, "_DB", None)
    monkeypatch.setattr(D, "_OPEN", [0])
    monkeypatch.setattr(D, "_SEEN", set())
    started = []
    real = D.connect_aside

    def aside():
        th = real()
        started.append(th)
        return th
    monkeypatch.setattr(qmod, "connect_aside", aside)
    got = run_query(Dataset(ds_root), QuerySpec(by="lpar"))
    assert len(started) == 1 and started[0] is not None and not started[0].is_alive()
    made = D._DB
    assert made is not None and made[0] == os.getpid() and D._OPEN[0] == 0
    assert len(got) and got["LPARCPU"].notna().any()
    run_query(Dataset(ds_root), QuerySpec(by="lpar"))
    assert started[1] is None and D._DB is made          # made already: no thread, the same database
