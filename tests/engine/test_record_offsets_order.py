"""``timezone.record_offsets`` and ``_system_rows``.  record_offsets: one row per (cec, lpar, system, time),
the first record stating it in frame order (a later frame's copy of the same system and time is not kept),
sorted by cec, lpar, system (as text) and time; names held as categoricals or as strings give the same text (a
missing one: 'nan')."""

from __future__ import annotations

import numpy as np
import pandas as pd

from app.engine.timezone import record_offsets

T0 = np.datetime64("2026-03-29T00:00:00", "ns")
H = np.timedelta64(3600, "s")


def _frame(rows, categorical: bool) -> pd.DataFrame:
    """rows: (cec, lpar, system, hours after T0, local minus UTC in seconds, source, offset)."""
    cec, lpar, system, hours, off, src, at = zip(*rows)
    t = T0 + np.array(hours) * H
    f = pd.DataFrame({"cec": list(cec), "lpar": list(lpar), "system": list(system), "time": t,
                      "local_time": t + np.array(off).astype("timedelta64[s]"), "source": list(src),
                      "offset": np.array(at, np.int64)})
    if categorical:
        for c in ("cec", "lpar", "system", "source"):
            f[c] = f[c].astype("category")
    return f


def test_first_record_of_each_system_and_time_sorted_by_name_and_time():
    a = _frame([("C1", "LPB", "SYSB", 1, 3600, "a.smf", 10),
                ("C1", "LPB", "SYSB", 1, 3600, "a.smf", 20),       # another CPU of the same record: not kept
                ("C1", "LPA", "SYSA", 2, 7200 + 400, "a.smf", 30),  # 7600 s -> 7200 (nearest quarter hour)
                ("C1", "LPA", "SYSA", 0, 3600, "a.smf", 40),
                ("C0", "LPZ", None, 5, -18000, "a.smf", 50)], categorical=True)
    b = _frame([("C1", "LPA", "SYSA", 2, 0, "b.smf", 5),               # the same system and time again: a's kept
                ("C1", "LPA", "SYSA", 3, 7200, "b.smf", 6)], categorical=False)
    got = record_offsets([a, b])
    # sorted by cec ('C0' < 'C1'), lpar ('LPA' < 'LPB'), system, time
    want = [("C0", "LPZ", "nan", 5, -18000, "a.smf", 50),
            ("C1", "LPA", "SYSA", 0, 3600, "a.smf", 40),
            ("C1", "LPA", "SYSA", 2, 7200, "a.smf", 30),
            ("C1", "LPA", "SYSA", 3, 7200, "b.smf", 6),
            ("C1", "LPB", "SYSB", 1, 3600, "a.smf", 10)]
    assert list(got.columns) == ["cec", "lpar", "system", "time", "offset_s", "source", "file_offset"]
    rows = [(r.cec, r.lpar, r.system, int((r.time - pd.Timestamp(T0)) / pd.Timedelta(hours=1)), r.offset_s,
             r.source, r.file_offset) for r in got.itertuples(index=False)]
    assert rows == want
    assert got.index.tolist() == list(range(5))


def test_system_rows_as_a_groupby_of_the_key():
    """``timezone._system_rows``: each system's key and rows, in the groupby's order (categoricals: the
    categories' order, here not the text's; a row with a missing name in no group), as a groupby gives them."""
    from app.engine.timezone import _system_rows

    cec = pd.Categorical(["C2", "C1", "C2", "C1", "C2", "C1"], categories=["C2", "C1"])
    lpar = pd.Categorical(["LB", "LA", "LA", "LA", None, "LB"], categories=["LB", "LA"])
    iv = pd.DataFrame({"cec": cec, "lpar": lpar, "system": pd.Categorical(["S"] * 6)})
    got = [(k, rows.tolist()) for k, rows in _system_rows(iv)]
    # by the codes: C2 before C1, LB before LA; row 4 (no LPAR) in no group; rows ascending
    assert got == [(("C2", "LB", "S"), [0]), (("C2", "LA", "S"), [2]), (("C1", "LB", "S"), [5]),
                   (("C1", "LA", "S"), [1, 3])]
    want = [(k, rows.tolist()) for k, rows in iv.groupby(["cec", "lpar", "system"], observed=True,
                                                        sort=True).indices.items()]
    assert got == want
    # names held as strings: the groupby itself
    plain = iv.astype(str)
    assert [k for k, _ in _system_rows(plain)] == list(plain.groupby(["cec", "lpar", "system"], sort=True).indices)
