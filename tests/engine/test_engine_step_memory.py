"""The engine's step holds less beside a chunk's samples counters (issue 24, the extract's peak): the samples'
identity columns (and their key codes) are let go once the interval rows are taken, before the interval rows'
checks and buckets; row keys read category codes as they are (no int64 copy of each kept); the UTC offsets'
text codes are as narrow as they fit.  The values are unchanged: keys over narrow codes are the same integers
as over int64 ones (hand-computed mixed radix below), and the findings and intervals the same as the reference
implementation's (tests/engine/test_deltas_fast.py, test_deltas_lazy.py)."""

from __future__ import annotations

import gc

import numpy as np
import pandas as pd
from factory import frame
from test_deltas_fast import KEEP, SETS, recs

from app.engine import deltas
from app.engine.keys import Cols, dense, row_key
from app.engine.timezone import _firsts, _text_codes


def _cat(codes: np.ndarray, n: int) -> tuple[np.ndarray, pd.CategoricalDtype]:
    cat = pd.Categorical.from_codes(codes, categories=[f"N{i:03d}" for i in range(n)])
    return np.asarray(cat.codes), cat.dtype


def test_row_key_over_narrow_category_codes_is_the_int64_mixed_radix():
    rng = np.random.default_rng(7)
    sizes = {"cec": 100, "lpar": 120, "system": 300}      # int8, int8, int16 codes: products overflow them
    a, cats = {}, {}
    for c, m in sizes.items():
        a[c], cats[c] = _cat(rng.integers(0, m, 500), m)
    S = Cols(a, cats)
    assert S["cec"].dtype == np.int8 and S["system"].dtype == np.int16
    assert S.codes("cec")[0] is S["cec"]                  # the codes as they are: no copy made (or kept)
    key, span = row_key(S, ["cec", "lpar", "system"])
    # hand: ((cec * 120) + lpar) * 300 + system, in Python integers
    want = [(int(x) * 120 + int(y)) * 300 + int(z) for x, y, z in zip(a["cec"], a["lpar"], a["system"])]
    assert key.dtype == np.int64 and key.tolist() == want and span == 100 * 120 * 300
    one, span1 = row_key(S, ["lpar"], np.arange(0, 500, 7))
    assert one.dtype == np.int64 and one.tolist() == a["lpar"][::7].astype(int).tolist() and span1 == 120
    # a taken Cols (the interval rows) detached from its parent: the same groups as through the parent's codes
    a["cpu"] = rng.integers(0, 40, 500).astype(np.int32)
    rows = rng.permutation(500)[:300]
    via_parent = S.take(rows)
    alone = S.take(rows)
    alone.detach()
    for names in (["cpu"], ["cec", "cpu"], ["system", "cpu", "lpar"]):
        np.testing.assert_array_equal(dense(*row_key(via_parent, names))[0], dense(*row_key(alone, names))[0])


def test_samples_identity_let_go_before_the_interval_rows_checks_and_buckets(monkeypatch):
    # running totals (subtype 2): 6 samples of each of 3 CPUs, the first of each run a baseline: 15 intervals
    f = frame(recs(6, cpus=(0, 1, 2), kind="absolute"))
    n_samples = len(f)
    seen = {}
    orig_checks, orig_buckets = deltas._data_checks, deltas._buckets

    def alive() -> list[int]:
        gc.collect()
        return sorted({len(o) for o in gc.get_objects() if isinstance(o, Cols)})

    def checks(O, *a, **k):
        seen["checks"] = (len(O), O._parent, alive())
        return orig_checks(O, *a, **k)

    def buckets(O):
        seen["buckets"] = (len(O), O._parent, alive())
        return orig_buckets(O)

    monkeypatch.setattr(deltas, "_data_checks", checks)
    monkeypatch.setattr(deltas, "_buckets", buckets)
    iv, _, later = deltas.compute_intervals([f], SETS, KEEP, consume=True, lazy=True)
    assert n_samples == 18 and len(iv) == 15 == later.n
    for step in ("checks", "buckets"):
        n, parent, sizes = seen[step]
        assert n == 15 and parent is None
        assert n_samples not in sizes         # no Cols of the samples' rows (their columns) held any more


def test_text_codes_narrow_and_firsts_unchanged():
    names = [f"SYS{i:03d}" for i in range(200)]
    s = pd.Series(pd.Categorical([names[i % 200] for i in range(1000)], categories=names))
    c, n = _text_codes(s)
    assert c.dtype == np.int16 and n == 201                 # 200 names and the text of a missing one ('nan')
    small = pd.Series(pd.Categorical(["A", "B", "A", None], categories=["A", "B"]))
    cs, ns = _text_codes(small)
    assert cs.dtype == np.int8 and cs.tolist() == [0, 1, 0, 2] and ns == 3
    plain, k = _text_codes(pd.Series(["x", "y", "x"], dtype=object))
    assert plain.tolist() == [0, 1, 0] and k == 2
    # the first row of each (time, name): times 0,0,1,1 ... with names cycling over 200: rows 0..999 each a first
    # unless its (time, name) came before; by hand with times t = i // 400: names repeat at i and i + 200 within
    # one time when i % 400 < 200, so the firsts are the rows with i % 400 < 200 or i >= 800 (800..999: their
    # time 2, names 0..199 once)
    t = (np.arange(1000) // 400).astype(np.int64)
    rows = np.arange(1000)
    got = _firsts(t, [(c, n)], rows)
    want = [i for i in range(1000) if i % 400 < 200 or i >= 800]
    assert got.tolist() == want
    wide = _firsts(t, [(c.astype(np.int64), n)], rows)
    np.testing.assert_array_equal(got, wide)
