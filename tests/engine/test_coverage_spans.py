"""coverage_of_spans (issue 24: query --every gives thousands of groups) computed in one pass over the children:
the same rows, percentages and notes as the rule applied group by group (the reference below, the function as it
was written before, one pandas group at a time)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from app.engine.partitions import _KEYS, _child_name, coverage_of_spans


def reference(spans: pd.DataFrame, level: str) -> pd.DataFrame:
    keys = _KEYS[level]
    out = []
    for key, g in spans.groupby(keys, observed=True, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        lo, hi = g["first"].min(), g["last"].max()
        total = (hi - lo).total_seconds()
        if total <= 0:
            out.append((*key, 100.0, ""))
            continue
        frac = ((g["last"] - g["first"]).dt.total_seconds() / total).clip(0, 1)
        tol = pd.to_timedelta(1.5 * g["step"].fillna(0).to_numpy(), unit="s")
        short = ((g["first"] - lo) > tol) | ((hi - g["last"]) > tol)
        notes = [f"{_child_name(level, x)} {x['first']:%Y-%m-%d %H:%M}..{x['last']:%Y-%m-%d %H:%M}"
                 for _, x in g.loc[short].iterrows()]
        note = ""
        if notes:
            note = (f"covers {lo:%Y-%m-%d %H:%M}..{hi:%Y-%m-%d %H:%M} UTC but only partly: " + "; ".join(notes[:6])
                    + (f"; {len(notes) - 6} more" if len(notes) > 6 else ""))
        out.append((*key, float(frac.mean() * 100.0), note))
    return pd.DataFrame(out, columns=keys + ["coverage_pct", "coverage_note"])


T0 = pd.Timestamp("2026-11-02 00:00")

child = st.tuples(st.sampled_from(["C1", "C2"]), st.sampled_from(["ZOSA", "ZOSB", "CF01"]),
                  st.sampled_from(["GCP", "zIIP"]), st.integers(0, 9),
                  st.integers(0, 96), st.integers(0, 96), st.sampled_from([60.0, 900.0, None]))


@settings(max_examples=150, deadline=None)
@given(rows=st.lists(child, min_size=1, max_size=40), level=st.sampled_from(["cec", "lpar", "class"]))
def test_one_pass_is_the_rule_group_by_group(rows, level):
    recs = []
    for cec, lpar, cls, cpu, a, b, step in rows:
        a, b = min(a, b), max(a, b)
        recs.append({"cec": cec, "lpar": lpar, "system": "S" + lpar[-1], "class": cls, "cpu": cpu,
                     "first": T0 + pd.Timedelta(minutes=15 * a), "last": T0 + pd.Timedelta(minutes=15 * b),
                     "step": step})
    spans = pd.DataFrame(recs)
    child_cols = {"cec": ["lpar", "system"], "lpar": ["class", "cpu"], "class": ["cpu"]}[level]
    spans = spans.drop_duplicates(_KEYS[level] + child_cols, ignore_index=True)
    got, want = coverage_of_spans(spans, level), reference(spans, level)
    assert list(got.columns) == list(want.columns)
    assert got[_KEYS[level]].equals(want[_KEYS[level]])
    assert got["coverage_note"].tolist() == want["coverage_note"].tolist()
    np.testing.assert_allclose(got["coverage_pct"].to_numpy(float), want["coverage_pct"].to_numpy(float),
                               rtol=1e-12, atol=0)


def test_a_cec_whose_lpar_stops_at_noon():
    # two LPARs over one day of 15-minute intervals, ZOSB only to 12:00: (1 + 0.5) / 2 = 75 %
    spans = pd.DataFrame({"cec": ["C1", "C1"], "lpar": ["ZOSA", "ZOSB"], "system": ["SYSA", "SYSB"],
                          "first": [T0, T0], "last": [T0 + pd.Timedelta(hours=24), T0 + pd.Timedelta(hours=12)],
                          "step": [900.0, 900.0]})
    got = coverage_of_spans(spans, "cec")
    assert got["coverage_pct"].tolist() == [75.0]
    assert got["coverage_note"].tolist() == [
        "covers 2026-11-02 00:00..2026-11-03 00:00 UTC but only partly: LPAR ZOSB 2026-11-02 00:00..2026-11-02 12:00"]
