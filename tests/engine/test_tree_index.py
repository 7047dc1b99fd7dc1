"""``tree._index``: a level frame's rows by node key, holding the key columns and the columns a tree node takes,
each value what the whole row's ``to_dict`` gives (the tree's nodes unchanged by taking fewer columns)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from app.engine.tree import _INFO_COLS, _index

_VALUES = st.one_of(st.none(), st.floats(allow_nan=True, allow_infinity=True), st.integers(-5, 5), st.text(max_size=3))


@settings(max_examples=60, deadline=None)
@given(n=st.integers(0, 6), extra=st.lists(st.sampled_from(["B0", "B1", "P40", "Eff_GHz", "qbits"]), unique=True),
       info=st.lists(st.sampled_from(list(_INFO_COLS)), unique=True), data=st.data())
def test_index_keeps_the_keys_and_info_columns_with_the_rows_values(n, extra, info, data):
    cols = {"cec": [f"C{i % 2}" for i in range(n)], "lpar": [f"L{i}" for i in range(n)]}
    for c in [*info, *extra]:
        cols[c] = data.draw(st.lists(_VALUES, min_size=n, max_size=n))
    frame = pd.DataFrame(cols)
    for c in info:          # numeric info columns as the level frames hold them
        if c != "formula_set":
            frame[c] = pd.to_numeric(frame[c], errors="coerce").astype(np.float64)
    got = _index(frame, ["cec", "lpar"])
    whole = {(r["cec"], r["lpar"]): r for r in frame.to_dict("records")}
    assert set(got) == set(whole)
    for key, rec in got.items():
        assert list(rec) == ["cec", "lpar", *[c for c in _INFO_COLS if c in info]]    # no other column
        for c, v in rec.items():
            w = whole[key][c]
            assert (v is w) or (v == w) or (isinstance(v, float) and np.isnan(v) and np.isnan(w))


def test_index_of_a_level_frame():
    """A two-row CEC frame with metric columns: only cec, n_cpus, LPARCPU and CPI are kept (hand-written)."""
    frame = pd.DataFrame({"cec": ["A", "B"], "n_cpus": [4, 2], "LPARCPU": [12.5, np.nan], "CPI": [3.0, 4.0],
                          "B0": [1e9, 2e9], "Eff_GHz": [5.2, 5.2]})
    got = _index(frame, ["cec"])
    assert got[("A",)] == {"cec": "A", "n_cpus": 4, "LPARCPU": 12.5, "CPI": 3.0}
    assert np.isnan(got[("B",)]["LPARCPU"]) and got[("B",)]["n_cpus"] == 2
