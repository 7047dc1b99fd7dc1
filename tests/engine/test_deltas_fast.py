"""The array-based compute_intervals gives exactly what the previous frame-based one gave.

The previous implementation is frozen in ``_deltas_reference.py`` (tests only).  Every case compares the two
column by column -- names and order, dtype, values with NaN/NaT positions, category labels and codes -- and
the findings (file, offset, severity, code, message, key), on the bundled sample files, on hand-made frames
with resets, version/set/speed changes, duplicates, both kinds, MONWRITE-style running totals, stated
intervals, lost data, MT counters, CPUs coming and going, moving systems and unknown machines, and on a
generated month slice (also split into several frames, also with CPUs leaving at one time).
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from _deltas_reference import compute_intervals as reference
from factory import ALL_SETS, MIN15, T0, frame

from app.engine.catalog import load_formula_sets
from app.engine.deltas import _Counters, compute_intervals
from app.formats import read_file
from app.formats.schema import SET_BASIC, SET_MT, SET_PROBLEM

ROOT = Path(__file__).resolve().parents[2]
SETS = load_formula_sets()
KEEP = {f"B{i}" for i in range(32)} | {f"P{i}" for i in range(32, 64)}
for _fs in SETS.values():
    KEEP |= _fs.counters()


@pytest.fixture(scope="module", autouse=True)
def _give_memory_back():
    """The module makes and drops many frames; hand the freed heap back at its end so tests that measure the
    process' resident memory afterwards (test_memory.py) start from a trimmed heap."""
    yield
    import gc

    from app import memory
    gc.collect()
    memory.release()


def assert_same(frames: list[pd.DataFrame], keep: set[str] | None = KEEP) -> pd.DataFrame:
    """Both implementations on copies of ``frames``; identical output (returned) and findings."""
    got, gf = compute_intervals([f.copy() for f in frames], SETS, keep)
    exp, ef = reference([f.copy() for f in frames], SETS, keep)
    assert list(got.columns) == list(exp.columns)
    assert len(got) == len(exp)
    assert isinstance(got.index, pd.RangeIndex) and got.index.equals(exp.index)
    for c in exp.columns:
        g, e = got[c], exp[c]
        assert g.dtype == e.dtype, c
        if isinstance(e.dtype, pd.CategoricalDtype):
            assert list(g.cat.categories) == list(e.cat.categories), c
            assert g.cat.categories.dtype == e.cat.categories.dtype, c
            assert np.array_equal(g.cat.codes.to_numpy(), e.cat.codes.to_numpy()), c
        else:
            gv, ev = g.to_numpy(), e.to_numpy()
            if gv.dtype.kind == "f":
                assert np.array_equal(np.isnan(gv), np.isnan(ev)), c
            assert np.array_equal(gv, ev, equal_nan=gv.dtype.kind in "fmM"), c
    pd.testing.assert_frame_equal(got, exp, check_exact=True)
    assert gf == ef
    return got


# -- bundled samples --------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def bundled() -> list[pd.DataFrame]:
    paths = sorted((ROOT / "resources" / "samples").glob("*.gz")) + sorted((ROOT / "resources" / "samples"
                                                                             / "broken").iterdir())
    out = [read_file(p).samples for p in paths]
    return [f for f in out if f is not None]


def test_bundled_samples_all_together_and_each_alone(bundled):
    iv = assert_same(bundled)
    assert len(iv) > 10_000                           # the sample set has 2 days of several LPARs
    assert iv["kind"].nunique() == 2                  # subtype 1, subtype 2 / MONWRITE running totals both there
    for f in bundled:
        assert_same([f])


def test_bundled_samples_every_counter_kept(bundled):
    assert_same(bundled, keep=None)


def test_bundled_samples_twice_are_duplicates(bundled):
    f = bundled[1]
    assert_same([f, f])                               # every record of the second copy is a duplicate


# -- hand-made frames --------------------------------------------------------------------------------------------
def recs(n: int, cpus=(0, 1), start=T0, step=MIN15, **kw) -> list[dict]:
    """n intervals x cpus running-total (or delta) records, counters growing."""
    out = []
    for i in range(n):
        for c in cpus:
            k = i + 1
            r = {"cpu": c, "time": start + k * step, "B0": 1000 * k * (c + 1), "B1": 400 * k, "B2": 10 * k,
                 "B3": 30 * k, "B4": 5 * k, "B5": 50 * k, "P32": 500 * k, "P33": 200 * k, "E128": 7 * k,
                 "E143": 3 * k, "offset": 100 * (len(out) + 1)}
            r.update(kw)
            out.append(r)
    return out


def test_running_totals_reset_version_sets_speed_changes():
    r = recs(8, kind="absolute", first=False)
    r[0]["first"] = r[1]["first"] = True
    for x in r[6:8]:                                   # counters go backwards at interval 4 (reset)
        x["B0"], x["B1"] = 5, 5
    for x in r[8:10]:
        x["B0"], x["B1"] = 9, 9
    r[10]["cfvn"] = 1                                  # version change on CPU 0 at interval 6
    r[12]["sets"] = SET_BASIC | SET_PROBLEM            # sets change on CPU 0 at interval 7
    r[13]["cpu_speed"] = 4000                          # speed change on CPU 1 at interval 7
    r[14]["first"] = True                              # a first flag in the middle (new run) on CPU 0
    assert_same([frame(r)])


@pytest.mark.parametrize("rows", [1, 3])
def test_running_totals_compared_a_few_rows_at_a_time(monkeypatch, rows):
    """The going-backwards check compares the running totals ``_CHECK_ROWS`` rows at a time: with blocks of 1 or
    3 rows (the resets at intervals 4 and 5 of both CPUs fall in different blocks) the same intervals and
    findings as the reference (a block's rows must be exactly the candidates of that block)."""
    from app.engine import deltas

    monkeypatch.setattr(deltas, "_CHECK_ROWS", rows)
    r = recs(8, kind="absolute", first=False)
    r[0]["first"] = r[1]["first"] = True
    for x in r[6:8]:                                   # counters go backwards at interval 4 (reset)
        x["B0"], x["B1"] = 5, 5
    for x in r[8:10]:                                  # ... and again at interval 5 on CPU 1 only
        x["B0"], x["B1"] = 9, 9
    r[11]["B0"] = 1
    assert_same([frame(r)])
    _, found = compute_intervals([frame(r)], SETS, KEEP)
    # the resets found: interval 4 (records 7 and 8, offsets 700 and 800: one finding for the system's time,
    # naming both CPUs, at the first record's offset) and interval 5 of CPU 1 (record 12, offset 1200)
    assert sorted(f.offset for f in found if f.code == "counter-reset") == [700, 1200]


def test_missing_sets_and_partial_rows():
    r = recs(6)
    for x in r[::3]:
        x["sets"] = SET_BASIC
    for x in r[1::4]:
        x["sets"] = SET_BASIC | SET_PROBLEM
    iv = assert_same([frame(r)])
    assert iv["E128"].isna().any() and iv["B0"].notna().all()


def test_duplicates_in_one_file_and_across_files():
    r = recs(4)
    f1 = frame(r + r[:3])
    f2 = frame(r[2:], )
    f2["source"] = pd.Categorical(["other.smf"] * len(f2))
    assert_same([f1, f2])


def test_both_kinds_for_the_same_intervals():
    d = recs(4, kind="delta")
    a = recs(6, kind="absolute")
    a[0]["first"] = a[1]["first"] = True
    assert_same([frame(d + a)])
    assert_same([frame(d), frame(a)])


def test_monwrite_running_totals_no_run_start():
    r = recs(6, cpus=(0, 1, 2, 3), kind="absolute", os="z/VM", run_start=pd.NaT, system="VMSYS1", lpar="VMSYS1",
             **{"class": "IFL"})
    assert_same([frame(r)])
    d = recs(5, cpus=(0, 1), kind="delta", os="z/VM", run_start=pd.NaT, system="VMSYS2", lpar="VMSYS2")
    assert_same([frame(d)])                           # first delta without run start: the usual length is assumed


def test_stated_intervals_lost_data_and_odd_length():
    r = recs(6, cpus=(0, 1, 2))
    f = frame(r)
    f["rec_start"] = f["time"] - MIN15
    f["rec_end"] = f["time"]
    f.loc[4, "rec_end"] = f.loc[4, "time"] + pd.Timedelta(seconds=30)    # disagrees with the CTM
    f.loc[7, "rec_start"] = pd.NaT
    f.loc[2, "lost"] = True
    f.loc[[9, 10, 11], "time"] = f.loc[[9, 10, 11], "time"] + pd.Timedelta(minutes=5)   # one long interval
    assert_same([f])
    g = frame(recs(3, cpus=(5,)))                      # a second frame without the stated columns
    assert_same([f, g])


def test_mt_counters_one_cpu_per_core():
    r = recs(4, cpus=(0, 1, 2, 3), sets=ALL_SETS | SET_MT, M448=100, M449=50)
    for x in r:
        x["core"] = x["cpu"] // 2
    r[5]["mt_lost"] = True
    assert_same([frame(r)], keep=None)


def test_cpus_coming_and_going_systems_moving_unknown_machines():
    a = recs(6, cpus=(0, 1))
    a += recs(3, cpus=(2,), start=T0 + 3 * MIN15)                      # CPU 2 appears late
    b = recs(4, cpus=(0,), system="SYSB", lpar="SYSB")
    b += recs(3, cpus=(0,), system="SYSB", lpar="SYSB", start=T0 + 10 * MIN15, cec="3931-OTHER",
              serial="OTHER")                                          # SYSB moves to another CEC
    c = recs(3, cpus=(0,), system="SYSC", lpar="SYSC", machine_type="9999", csvn=7)     # type unknown, CSVN known
    d = recs(3, cpus=(0,), system="SYSD", lpar="SYSD", machine_type="9999", csvn=99)    # neither known
    e = recs(3, cpus=(0,), system="SYSE", lpar="SYSE", csvn=6)                          # CSVN mismatch
    g = recs(2, cpus=(0,), system="SYSA", lpar="SYSA", cec="3931-TWIN", serial="TWIN")  # SYSA on two CECs at once
    assert_same([frame(a + b + c + d + e + g)])


def test_nothing_left_and_empty_inputs():
    one = recs(1, cpus=(0,), kind="absolute", first=True)
    assert_same([frame(one)])                          # a baseline only: no interval
    assert_same([frame([])])
    assert_same([])


def test_counters_in_odd_layouts():
    """Counter columns that are not uint64 blocks (int64, a single-column block, another frame's slice)."""
    f = frame(recs(5, cpus=(0, 1, 2)))
    g = f.copy()
    g["B1"] = g["B1"].astype(np.int64)
    g["E143"] = g["E143"].to_numpy().copy()
    assert_same([g])
    assert_same([f.iloc[:9], f.iloc[9:]])


def test_counters_read_through_one_record_block_view():
    """A reader-style block (rows x counters, row-major) is read through one 2-D view; values as the columns."""
    n, names = 50, ["B0", "B1", "E128", "E129"]
    block = np.arange(n * 6, dtype=np.uint64).reshape(n, 6)             # 6 words per record, 4 used
    f = pd.DataFrame(block, columns=["B0", "B1", "B2", "E128", "E129", "E130"], copy=False)
    assert np.shares_memory(f["E129"].to_numpy(), block)
    c = _Counters([f], names)
    (groups, _missing), = c.parts
    rows = np.array([7, 3, 49, 0])
    got = c.full(rows)
    assert np.array_equal(got, f[names].to_numpy()[rows])           # e.g. row 7: 42, 43, 45, 46
    assert got[0].tolist() == [42, 43, 45, 46]
    assert len(groups) == 1 and groups[0][0].shape == (n, 5)           # one view over words 0..4 of each record


# -- a generated month slice ---------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def month_slice(tmp_path_factory) -> pd.DataFrame:
    from app.formats import smf113_writer
    from app.sample.build import MIX_GCP, MIX_ZIIP
    from app.sample.model import CecModel, ClassModel, LparModel, make_samples

    lpars = [LparModel(f"LP{i:02d}", f"SY{i:02d}", [ClassModel("GCP", 12, 60 + i, 3.0 + 0.1 * i, 3.0, MIX_GCP),
                                                  ClassModel("zIIP", 4, 35, 2.5, 2.2, MIX_ZIIP, 85)])
             for i in range(3)]
    samples, _ = make_samples(CecModel("z16", "00000000000BE7C4", lpars), dt.datetime(2026, 10, 1), 48, 900.0,
                              seed=1)
    path = tmp_path_factory.mktemp("month") / "month.smf"
    smf113_writer.write_smf_file(path, smf113_writer.encode_samples(samples, 1), framing="rdw")
    return read_file(path).samples


def test_month_slice(month_slice):
    iv = assert_same([month_slice])
    assert len(iv) == 3 * 16 * 48                      # subtype 1: every record is an interval
    assert iv["E128"].to_numpy().flags.c_contiguous    # each counter contiguous (what groupby sums read fastest)
    assert_same([month_slice], keep=None)


def test_month_slice_in_several_frames_with_cpus_leaving(month_slice):
    f = month_slice
    t = f["time"].to_numpy()
    cut = np.sort(np.unique(t))[30]
    leave = (f["cpu"].to_numpy() >= 10) & (t > cut)    # CPUs 10.. of every LPAR stop at one time: many ties
    g = f.loc[~leave].reset_index(drop=True)
    assert_same([g])
    k = len(g) // 3
    assert_same([g.iloc[:k], g.iloc[k:2 * k], g.iloc[2 * k:]])


def test_running_totals_run_across_files():
    a = recs(6, cpus=(0, 1, 2), kind="absolute")
    a[0]["first"] = a[1]["first"] = a[2]["first"] = True
    iv = assert_same([frame(a[:7]), frame(a[7:12]), frame(a[12:])])
    assert len(iv) == 15                               # 6 records per CPU, the first a baseline: 3 x 5


def test_records_out_of_time_order(month_slice):
    """Shuffled records: runs sorted by time (not file order), duplicates looked for by hashing."""
    rng = np.random.default_rng(3)
    f = month_slice.iloc[rng.permutation(len(month_slice))].reset_index(drop=True)
    assert_same([f])
    a = recs(5, cpus=(0, 1), kind="absolute")
    a[0]["first"] = a[1]["first"] = True
    assert_same([frame(a[::-1])])
