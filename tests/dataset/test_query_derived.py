"""CPSP and INTERVAL of DuckDB's one-SELECT statement, computed in Python (app/dataset/query.py
``derived_columns``), against the SQL the layered statement evaluates them with (``build_sql``'s ``a2`` step),
on any sums: NULLs, zeros, negatives and ordinary values (issue 24, the narrow query)."""

from __future__ import annotations

import duckdb
import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from app.dataset.query import derived_columns

# the layered statement's expressions (app/dataset/query.py build_sql), B0 among the counters
CPSP = 'CASE WHEN _sb > 0 THEN "B0" / _sb ELSE CAST(_cpsp_max AS DOUBLE) END'
PER_INTERVAL = "CASE WHEN _sf > 0 THEN _sb / (1000000.0 * _sf) ELSE _ivs END"
WINDOW = "CAST(_nb AS DOUBLE) * COALESCE(_blen, _ivs)"

_num = st.one_of(st.none(), st.just(0.0), st.floats(-1e12, 1e15, allow_nan=False, allow_infinity=False))
_row = st.tuples(_num, _num, st.one_of(st.none(), st.integers(0, 6000)), _num, _num,
                 st.one_of(st.none(), st.integers(0, 100_000)), _num)


def _sql(rows: list[tuple]) -> dict[str, np.ndarray]:
    """CPSP, INTERVAL per interval and INTERVAL of a window of ``rows`` as DuckDB evaluates them."""
    df = pd.DataFrame(rows, columns=["_sb", "B0", "_cpsp_max", "_sf", "_ivs", "_nb", "_blen"]).astype(
        {"_sb": "float64", "B0": "float64", "_cpsp_max": "Int64", "_sf": "float64", "_ivs": "float64", "_nb": "Int64",
         "_blen": "float64"})
    con = duckdb.connect()
    try:
        con.register("agg", df)
        got = con.execute(f"SELECT {CPSP} AS c, {PER_INTERVAL} AS p, {WINDOW} AS w FROM agg").df()
    finally:
        con.close()
    return {k: pd.to_numeric(got[k], errors="coerce").to_numpy(np.float64, na_value=np.nan) for k in "cpw"}


@settings(max_examples=40, deadline=None)
@given(rows=st.lists(_row, min_size=1, max_size=12))
def test_derived_columns_are_the_layered_statements(rows):
    raw = pd.DataFrame(rows, columns=["_sb", "B0", "_cpsp_max", "_sf", "_ivs", "_nb", "_blen"]).astype(
        {"_sb": "float64", "B0": "float64", "_sf": "float64", "_ivs": "float64", "_blen": "float64"})
    want = _sql(rows)
    for per_interval, key in ((True, "p"), (False, "w")):
        got = derived_columns(raw, per_interval)
        for col, w in (("_CPSP", want["c"]), ("_INTERVAL", want[key])):
            x = got[col].to_numpy(np.float64)
            assert np.array_equal(x, w, equal_nan=True), (col, per_interval, x, w)
        assert list(got.columns[:7]) == list(raw.columns)          # the statement's columns kept, in order


def test_derived_columns_by_hand():
    """Two rows worked by hand: busy 2 s of B0 10,400 cycles at 5,200 cycles/us...; no busy time: the CPU speed."""
    raw = pd.DataFrame({"_sb": [2.0e6, 0.0], "B0": [10.4e9, 5.0], "_cpsp_max": [5200, 5200], "_sf": [2.0, 0.0],
                        "_ivs": [900.0, 900.0], "_nb": [4, 4], "_blen": [900.0, np.nan]})
    win = derived_columns(raw, False)
    assert win["_CPSP"].tolist() == [5200.0, 5200.0]       # 10.4e9 / 2e6; else the highest speed
    assert win["_INTERVAL"].tolist() == [3600.0, 3600.0]   # 4 buckets x 900 s; no bucket length: the median 900
    per = derived_columns(raw, True)
    assert per["_INTERVAL"].tolist() == [1.0, 900.0]       # 2e6 us / (1e6 x 2 busy fractions) = 1 s; else median
