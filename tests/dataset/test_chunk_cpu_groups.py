"""The chunk's per-CPU look-ups made from one grouping (app/dataset/dedup.py ``CpuEnds``, ``tail_of``,
``first_times_of``) and the parts found on category codes (app/dataset/adder.py ``_part_groups``) give what
pandas' groupings gave: random CPUs, kinds, times, a tail with CPUs the chunk has not (kept) and has (replaced,
equal times going to the chunk's row), names with categories in another order than the tail's."""

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings, strategies as st

from app.dataset import dedup
from app.dataset.adder import _part_groups

T0 = np.datetime64("2026-03-01T00:00", "ns")


def _samples(rows, classes=("GCP", "zIIP")):
    """Sample rows (cpu, kind index, minute) of one CEC and system; ``classes`` orders the class categories."""
    n = len(rows)
    return pd.DataFrame({
        "source": pd.Categorical(["f.smf"] * n), "cec": pd.Categorical(["C1"] * n),
        "lpar": pd.Categorical(["L1"] * n), "system": pd.Categorical(["S1"] * n),
        "class": pd.Categorical([classes[r[0] % 2] for r in rows], categories=list(classes)),
        "cpu": np.array([r[0] for r in rows], np.int32),
        "kind": pd.Categorical([("delta", "absolute")[r[1]] for r in rows], categories=["delta", "absolute"]),
        "time": np.array([T0 + np.timedelta64(r[2], "m") for r in rows], "datetime64[ns]"),
        "offset": np.arange(n, dtype=np.int64),
        "B0": np.arange(n, dtype=np.uint64) * 7})


def _tail_reference(tail, samples, sha):
    """The tail as the pandas way made it: the chunk's last row of each CPU, joined to the tail, the latest row
    of each CPU kept (of equal times the later row)."""
    last = samples.groupby(dedup.SAMPLE_KEY, observed=True, sort=False, dropna=False)["time"].idxmax().to_numpy()
    new = samples.loc[np.sort(last)]
    new = new.assign(_orig_source=new["source"].astype(str), source=dedup.CONTEXT_SOURCE + sha, sha256=sha)
    new = new.reset_index(drop=True)
    both = new if tail is None else pd.concat([tail, new[list(tail.columns)]], ignore_index=True)
    key = both[dedup.SAMPLE_KEY].astype(str).agg("|".join, axis=1)
    best = {}
    for i, (k, t) in enumerate(zip(key, both["time"])):
        if k not in best or t >= both["time"].iloc[best[k]]:
            best[k] = i
    out = both.iloc[sorted(best.values())].reset_index(drop=True)
    for c in ("source", "_orig_source", "sha256"):
        out[c] = out[c].astype(str)
    return out


_row = st.tuples(st.integers(0, 5), st.integers(0, 1), st.integers(0, 50))


@settings(max_examples=60, deadline=None)
@given(st.lists(_row, min_size=1, max_size=30), st.lists(_row, min_size=1, max_size=30), st.booleans())
def test_tail_of_is_the_pandas_way(first, second, swap):
    # the second chunk's class categories in the other order when ``swap`` (a concat's dtype then changes)
    a = _samples(first)
    b = _samples(second, ("zIIP", "GCP") if swap else ("GCP", "zIIP"))
    tail = dedup.tail_of(None, a, "s1")
    pd.testing.assert_frame_equal(tail, _tail_reference(None, a, "s1"), check_exact=True)
    ends = dedup.CpuEnds(b)
    got = dedup.tail_of(tail, b, "s2", ends)
    pd.testing.assert_frame_equal(got, _tail_reference(tail, b, "s2"), check_exact=True)
    # the first time of each CPU (cec, lpar, system, class, cpu) over its kinds, as the settling finds it
    want = b.groupby(dedup.INTERVAL_KEY, observed=True)["time"].min()
    firsts = dedup.first_times_of(ends)
    assert firsts == {tuple(str(x) if i != 4 else int(x) for i, x in enumerate(k)): int(v.value)
                      for k, v in want.items()}


def test_a_tail_cpu_the_chunk_lacks_is_kept_and_an_equal_time_goes_to_the_chunk():
    # tail: CPUs 0 and 1 at minute 10; the chunk: CPU 1 at minute 10 again (equal: the chunk's row), no CPU 0
    tail = dedup.tail_of(None, _samples([(0, 0, 10), (1, 0, 10)]), "s1")
    got = dedup.tail_of(tail, _samples([(1, 0, 10), (2, 0, 5)]), "s2")
    assert got["cpu"].tolist() == [0, 1, 2]
    assert got["sha256"].tolist() == ["s1", "s2", "s2"]


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(-1, 2), st.integers(-1, 2)), min_size=1, max_size=40), st.booleans())
def test_part_groups_are_the_groupbys(rows, taken):
    cec = pd.Categorical.from_codes([r[0] for r in rows], categories=["Z9", "A1", "M5"])   # -1: missing
    month = pd.Categorical.from_codes([r[1] for r in rows], categories=["2026-01", "2026-02", "2026-03"])
    f = pd.DataFrame({"cec": cec, "month": month})
    take = np.arange(len(rows))[::-1][: max(1, len(rows) // 2)].copy() if taken else None
    got = _part_groups(f, take)
    keys = f if take is None else f.iloc[take]
    want = list(keys.groupby(["cec", "month"], observed=True, sort=True).indices.items())
    assert [k for k, _ in got] == [k for k, _ in want]
    for (_, a), (_, b) in zip(got, want):
        assert a.tolist() == b.tolist()


def test_one_part_is_every_row_and_two_months_split_in_category_order():
    f = pd.DataFrame({"cec": pd.Categorical(["C"] * 4),
                      "month": pd.Categorical(["2026-02", "2026-01", "2026-02", "2026-01"])})
    assert [(k, i.tolist()) for k, i in _part_groups(f, None)] == [(("C", "2026-01"), [1, 3]),
                                                                    (("C", "2026-02"), [0, 2])]
    one = pd.DataFrame({"cec": pd.Categorical(["C"] * 3), "month": pd.Categorical(["2026-01"] * 3)})
    assert [(k, i.tolist()) for k, i in _part_groups(one, np.array([2, 0]))] == [(("C", "2026-01"), [0, 1])]
