"""``deltas._categorical`` / ``_codes_dtype``: name columns of several frames (categoricals, strings) joined
into one categorical equal to ``astype("category")`` of the joined text, its codes of the type pandas keeps
(int8 for a few names), its dtype made once for the same names."""

from __future__ import annotations

import numpy as np
import pandas as pd

from app.engine.deltas import _categorical, _codes_dtype, _labels_codes


def test_joined_names_as_astype_category_of_their_text():
    a = pd.DataFrame({"system": pd.Categorical(["SYSB", "SYSA", "SYSB"], categories=["SYSB", "SYSA", "SYSX"])})
    b = pd.DataFrame({"system": ["SYSC", "SYSA"]})                         # strings
    c = pd.DataFrame({"system": pd.Categorical(["SYSD", "SYSE"])})
    parts = [_labels_codes(f, "system") for f in (a, b, c)]
    got = _categorical(parts)
    text = ["SYSB", "SYSA", "SYSB", "SYSC", "SYSA", "SYSD", "SYSE"]
    want = pd.Series(text).astype("category").array                     # SYSX (no row) is left out
    assert list(got.categories) == ["SYSA", "SYSB", "SYSC", "SYSD", "SYSE"]
    assert list(got.astype(str)) == text
    assert got.codes.tolist() == want.codes.tolist() == [1, 0, 1, 2, 0, 3, 4]
    codes, dtype = _codes_dtype(parts)
    assert codes.dtype == np.int8 and codes.tolist() == got.codes.tolist()
    assert _codes_dtype(parts)[1] is dtype                               # the same names: the same dtype object


def test_one_categorical_frame_keeps_its_codes():
    f = pd.DataFrame({"lpar": pd.Categorical(["LP2", "LP1", "LP2"], categories=["LP1", "LP2"])})
    codes, dtype = _codes_dtype([_labels_codes(f, "lpar")])
    assert codes.tolist() == [1, 0, 1] and list(dtype.categories) == ["LP1", "LP2"]
