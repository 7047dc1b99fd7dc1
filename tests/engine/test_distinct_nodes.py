"""The distinct nodes behind node_labels (app.engine.compare._distinct): numbered in numpy from the category codes,
the numbers pandas' ``groupby(sort=False, observed=True, dropna=False).ngroup()`` gives, for any columns."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from app.engine.compare import _distinct

_NAME = st.sampled_from(["ZOSA", "ZOSB", "VMSYS1", None])


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.tuples(st.sampled_from(["8561-45A12", "3931-123F5"]), _NAME,
                               st.sampled_from(["GCP", "zIIP", "IFL", None]), st.one_of(st.none(), st.integers(0, 5)),
                               st.sampled_from(["z15", "z16", None])), min_size=1, max_size=40),
       categorical=st.booleans(), cpu_float=st.booleans())
def test_distinct_numbers_rows_as_pandas_ngroup(rows, categorical, cpu_float):
    f = pd.DataFrame(rows, columns=["cec", "lpar", "class", "cpu", "generation"])
    f["cpu"] = f["cpu"].astype("float64" if cpu_float else "Int64")
    if categorical:
        f = f.astype({"cec": "category", "lpar": "category", "class": "category"})
    cols = ["cec", "lpar", "class", "cpu", "generation"]
    want = f.groupby(cols, dropna=False, sort=False, observed=True).ngroup().to_numpy()
    codes, recs = _distinct(f)
    np.testing.assert_array_equal(codes, want)
    _, first = np.unique(want, return_index=True)
    assert len(recs) == want.max() + 1 == len(first)
    assert str(recs) == str(f[cols].iloc[first].to_dict("records"))      # each node's record: its first row
