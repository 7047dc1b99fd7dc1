"""The CPUs per processor class that a deck's configuration slide shows (app.export.story.class_cpus): the rows, order
and ``n_cpus`` of the selection's ``class`` metrics frame, for any window, shift and LPAR choice, without
computing that frame."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.analysis import make_workspace
from app.engine.compare import Selection
from app.engine.shift import make_shift
from app.export.story import _class_groups, class_cpu_counts, class_cpus

FILES = ["before_z15_ZOSA_smf113.rdw.gz", "before_z15_ZOSB_smf113.rdw.gz", "after_VMSYS1_monwrite.mondata.gz"]


@pytest.fixture(scope="module")
def ws(sample_result):
    return make_workspace([sample_result(n) for n in FILES], None)


def expected(sel) -> pd.DataFrame:
    m = sel.metrics("class")
    return m[["cec", "lpar", "class", "n_cpus"]].reset_index(drop=True)


def test_class_cpus_are_those_of_the_class_rows_of_the_whole_files(ws):
    sel = Selection(ws, name="before")
    got = class_cpus(sel)
    want = expected(sel)
    assert len(got) >= 3                                  # GCP and zIIP of ZOSA/ZOSB, the z/VM IFLs
    pd.testing.assert_frame_equal(got.reset_index(drop=True), want, check_dtype=False)
    assert got["n_cpus"].min() >= 1


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(hours=st.one_of(st.none(), st.tuples(st.integers(0, 23), st.integers(0, 23)).filter(lambda h: h[0] != h[1])),
       days=st.one_of(st.none(), st.sets(st.sampled_from(["mon", "tue", "wed", "thu", "fri", "sat", "sun"]),
                                         min_size=1)),
       tz=st.sampled_from(["utc", "local"]),
       cut=st.tuples(st.floats(0, 1), st.floats(0, 1)),
       lpars=st.sampled_from([None, ("ZOSA",), ("ZOSB", "ZOSA"), ("VMSYS1",)]))
def test_class_cpus_equal_the_class_metrics_for_any_window_shift_and_lpars(ws, hours, days, tz, cut, lpars):
    iv = ws.intervals
    lo, hi = iv["interval_end"].min(), iv["interval_end"].max()
    a, b = sorted(cut)
    shift = make_shift(f"{hours[0]:02d}-{hours[1]:02d}" if hours else None,
                       ",".join(sorted(days)) if days else None, tz=tz)
    nodes = None
    if lpars:
        pairs = iv[["cec", "lpar"]].drop_duplicates().astype(str)
        nodes = tuple(("lpar", c, lp) for c, lp in pairs.itertuples(index=False) if lp in lpars)
    sel = Selection(ws, nodes=nodes, start=lo + (hi - lo) * a, end=lo + (hi - lo) * b, shift=shift, name="after")
    pd.testing.assert_frame_equal(class_cpus(sel).reset_index(drop=True), expected(sel), check_dtype=False)


def test_class_cpu_counts_are_those_of_the_class_interval_rows(ws):
    """Per class and interval (what the configuration slide reads for CPUs varied on/offline): the ``n_cpus`` of the
    selection's ``class_interval`` metrics rows, counted without those metrics."""
    sel = Selection(ws, shift=make_shift("08-17", None), name="before")
    got = class_cpu_counts(sel)
    m = sel.metrics("class_interval")
    key = ["cec", "lpar", "class", "interval_end"]
    want = m[[*key, "n_cpus"]].astype({c: str for c in key[:3]}).sort_values(key, ignore_index=True)
    got = got.astype({c: str for c in key[:3]}).sort_values(key, ignore_index=True)
    assert len(got) > 100                                 # two days of 15-minute intervals in the prime shift
    pd.testing.assert_frame_equal(got, want, check_dtype=False)


_KEY = st.sampled_from(["A", "B", "C", None])


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(st.tuples(_KEY, _KEY, st.sampled_from(["GCP", "zIIP"]), st.integers(0, 5),
                               st.one_of(st.none(), st.integers(0, 7))), min_size=1, max_size=40),
       categorical=st.booleans())
def test_class_groups_equal_a_pandas_groupby(rows, categorical):
    """The numpy grouping behind class_cpus / class_cpu_counts gives pandas' ``groupby(sort=False, observed=True,
    dropna=False)`` with ``max`` of interval_end and ``nunique`` of cpu (a missing CPU not counted, a missing key its
    own group), in the same order: any keys, missing or not, categorical or not."""
    f = pd.DataFrame(rows, columns=["lpar", "os", "class", "hour", "cpu"])
    f["interval_end"] = pd.Timestamp("2026-01-01") + pd.to_timedelta(f["hour"], unit="h")
    f["cpu"] = f["cpu"].astype("Int64")
    if categorical:
        f = f.astype({"lpar": "category", "os": "category", "class": "category"})
    keys = ["lpar", "os", "class"]
    head, ends, n_cpus = _class_groups(f, keys)
    assert list(head.columns) == keys                       # the key columns only, as the keys give them
    g = f.groupby(keys, observed=True, sort=False, dropna=False)
    want = g.agg(interval_end=("interval_end", "max"), n_cpus=("cpu", "nunique")).reset_index()
    got = head[keys].assign(interval_end=ends, n_cpus=n_cpus)
    def plain(frame):                       # a missing key: None in a first row, NaN in pandas' group keys
        return frame.astype({k: object for k in keys}).fillna({k: "<missing>" for k in keys})
    pd.testing.assert_frame_equal(plain(got), plain(want), check_dtype=False)
