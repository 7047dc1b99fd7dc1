"""``node_rows.core_map`` finds the distinct (CEC, LPAR, class, core, CPU) rows on the columns' codes before making
text of them: its map must be the one made from the text of every row (the reference below, the map as it was
computed before 2026-11-27), for categorical and plain columns, any row order, cores absent (-1) or shared."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from app.engine.node_rows import _str_col, core_map


def _reference(iv: pd.DataFrame) -> dict:
    cols = ["cec", "lpar", "class", "core", "cpu"]
    f = iv[cols].copy()
    f = f.loc[f["core"].to_numpy() >= 0]
    if not len(f):
        return {}
    f = pd.DataFrame({c: (_str_col(f, c) if c in ("cec", "lpar", "class") else f[c].to_numpy(np.int64))
                      for c in cols}).drop_duplicates()
    out: dict = {}
    for (cec, lpar, cls), g in f.groupby(["cec", "lpar", "class"], sort=True):
        cores: dict = {}
        for core, cpu in sorted(zip(g["core"].tolist(), g["cpu"].tolist())):
            cores.setdefault(int(core), []).append(int(cpu))
        if any(len(v) > 1 for v in cores.values()):
            out[(str(cec), str(lpar), str(cls))] = cores
    return out


_ROW = st.tuples(st.sampled_from(["C1", "C2"]), st.sampled_from(["LA", "LB", "LC"]),
                 st.sampled_from(["GCP", "zIIP", "IFL"]), st.integers(-1, 3), st.integers(0, 7))


@settings(max_examples=150, deadline=None)
@given(rows=st.lists(_ROW, max_size=60), categorical=st.booleans())
def test_core_map_is_the_map_of_every_rows_text(rows, categorical):
    iv = pd.DataFrame(rows, columns=["cec", "lpar", "class", "core", "cpu"]).astype({"core": np.int32,
                                                                                     "cpu": np.int32})
    if categorical:
        iv = iv.astype({"cec": "category", "lpar": "category", "class": "category"})
    got, want = core_map(iv), _reference(iv)
    assert got == want
    assert [(k, list(v.items())) for k, v in got.items()] == [(k, list(v.items())) for k, v in want.items()]


def test_core_map_by_hand():
    """Two threads per core on LA's zIIPs (cores 0 and 1), one CPU per core on LB (not SMT), a core id -1 left out;
    each row repeated as intervals repeat it."""
    rows = [("C1", "LA", "zIIP", 0, 4), ("C1", "LA", "zIIP", 0, 5), ("C1", "LA", "zIIP", 1, 6),
            ("C1", "LA", "zIIP", 1, 7), ("C1", "LB", "GCP", 0, 0), ("C1", "LB", "GCP", 1, 1),
            ("C1", "LA", "GCP", -1, 0)]
    iv = pd.DataFrame(rows * 3, columns=["cec", "lpar", "class", "core", "cpu"]).astype({"lpar": "category"})
    assert core_map(iv) == {("C1", "LA", "zIIP"): {0: [4, 5], 1: [6, 7]}}
