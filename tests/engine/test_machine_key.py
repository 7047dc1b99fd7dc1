"""Issue 20, same system id on several machines: everything is keyed by the machine (type + serial) and the LPAR.

Disaster-recovery and test clones keep production's system ids, and a before/after pair of machines runs the same
system ids at once while the LPARs move.  One machine's records must never merge with, replace, reset or mark
another machine's: the z16 ZOSB (running totals, subtype 2) kept losing the intervals where the z15 ZOSB
(deltas, subtype 1) had records of the same CPU and time.
"""

from __future__ import annotations

import csv
import datetime as dt
import io

import numpy as np
import pandas as pd
import pytest
from factory import MIN15, T0, frame
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.engine import Workspace
from app.engine.catalog import load_formula_sets
from app.engine.deltas import compute_intervals
from app.formats import read_file
from app.sample.build import AFTER_START, Z15_SEQ, Z16_SEQ, write_zos, write_zvm, zos_lpars
from app.sample.model import CecModel

SETS = load_formula_sets()
Z16, Z15 = "3931-ABCDE", "8561-VWXYZ"      # two machines of the hand-made cases, both running SYSA


def _rec(i: int, cpu: int = 0, step: pd.Timedelta = MIN15, start: pd.Timestamp = T0, **kw) -> dict:
    """Record i of a CPU: time start + i*step, counters growing by (1e9, 4e8) cycles/instructions per step."""
    r = {"cpu": cpu, "time": start + i * step, "run_start": start, "B0": 10**9 * i, "B1": 4 * 10**8 * i,
         "B2": 10**6 * i, "B3": 10**6 * i, "B4": 10**5 * i, "B5": 10**7 * i, "P32": 5 * 10**8 * i,
         "P33": 2 * 10**8 * i}
    r.update(kw)
    return r


def _z16_totals(n: int, cpus=(0, 1), **kw) -> pd.DataFrame:
    """SYSA on the z16: subtype 2 style running totals, a baseline at T0 and n intervals."""
    return frame([_rec(i, c, kind="absolute", first=(i == 0), cec=Z16, serial="ABCDE", **kw)
                  for i in range(n + 1) for c in cpus], "z16")


def _z15_deltas(n: int, cpus=(0, 1), **kw) -> pd.DataFrame:
    """SYSA on the z15: subtype 1 style deltas of n intervals ending T0+15min .. T0+n*15min."""
    out = []
    for i in range(1, n + 1):
        for c in cpus:
            r = _rec(1, c, **{"kind": "delta", "cec": Z15, "serial": "VWXYZ", **kw})
            r["time"] = T0 + i * MIN15
            out.append(r)
    return frame(out, "z15")


def _rows(iv: pd.DataFrame, cec: str) -> pd.DataFrame:
    return iv.loc[iv["cec"].astype(str) == cec]


def test_running_totals_of_one_machine_are_not_replaced_by_another_machines_deltas():
    """Both machines have CPU 0 and 1 of SYSA at the same four times.  The z16 keeps its 4 intervals per CPU
    (5 running totals - the baseline), each delta the growth of one step: B0 1e9, B1 4e8 (see _rec); the z15
    keeps its own 4 x 2 delta rows (B0 1e9 as recorded).  No both-kinds finding: the kinds are of two machines."""
    iv, findings = compute_intervals([_z16_totals(4), _z15_deltas(4)], SETS)
    z16, z15 = _rows(iv, Z16), _rows(iv, Z15)
    assert len(z16) == 8 and len(z15) == 8
    assert (z16["B0"] == 1e9).all() and (z16["B1"] == 4e8).all()
    assert sorted(z16["interval_end"].unique()) == [T0 + i * MIN15 for i in range(1, 5)]
    assert z16["interval_start"].min() == T0
    assert not [f for f in findings if f.code == "both-kinds"]


def test_both_kinds_on_one_machine_still_prefer_the_deltas():
    """The subtype 1/2 merge itself stays: one machine writing both kinds for the same intervals keeps the
    deltas (4 intervals x 2 CPUs) and says so once, naming the machine."""
    d = _z15_deltas(4, cec=Z16, serial="ABCDE")
    d["machine_type"] = pd.Series(["3931"] * len(d), dtype="category")
    iv, findings = compute_intervals([_z16_totals(4), d], SETS)
    assert len(iv) == 8 and set(iv["kind"].astype(str)) == {"delta"}
    both = [f for f in findings if f.code == "both-kinds"]
    assert len(both) == 1 and "on 3931-ABCDE" in both[0].message and both[0].key["count"] == 8


def test_runs_cpus_and_lengths_are_judged_per_machine():
    """The z15 SYSA: CPUs 0-3, 103 15-minute intervals from a run that started a day before T0 (to T0+105min);
    the z16 SYSA: CPUs 0-1, 24 5-minute intervals of a run starting at T0 (to T0+120min).  Judged by system id
    alone, the z16's run was a "new run" of SYSA, the z15's CPUs 2-3 "vanished" at T0+105min (SYSA went on to
    T0+120min), and each 5-minute interval was 67 % off SYSA's 15-minute median (odd-length); per machine and
    LPAR none of these holds."""
    day = pd.Timedelta(days=1)
    z15 = frame([_rec(i, c, kind="absolute", first=(i == 0), cec=Z15, serial="VWXYZ", start=T0 - day)
                 for i in range(0, 96 + 8) for c in (0, 1, 2, 3)], "z15")
    z16 = frame([_rec(i, c, step=pd.Timedelta(minutes=5), kind="absolute", first=(i == 0), cec=Z16,
                      serial="ABCDE") for i in range(25) for c in (0, 1)], "z16")
    iv, findings = compute_intervals([z15, z16], SETS)
    codes = {f.code for f in findings}
    assert not codes & {"new-run", "cpu-appeared", "cpu-vanished", "odd-length"}, codes
    assert (iv["quality"].astype(str) == "").all()
    assert len(_rows(iv, Z16)) == 2 * 24 and len(_rows(iv, Z15)) == 4 * (96 + 7)
    # two machines at the same time under one system id: a warning, their numbers apart (as before)
    assert [f.code for f in findings if f.code == "lpar-moved"] == ["lpar-moved"]


def test_duplicates_are_per_machine():
    """The same CPU, time and kind on two machines is no duplicate (the duplicate check held the machine before
    issue 20 too; this keeps it so): both machines keep their 4 intervals of 2 CPUs, no duplicate-record finding."""
    a = _z15_deltas(4)
    b = _z15_deltas(4, cec=Z16, serial="ABCDE")
    iv, findings = compute_intervals([a, b], SETS)
    assert len(_rows(iv, Z15)) == 8 and len(_rows(iv, Z16)) == 8
    assert not [f for f in findings if f.code == "duplicate-record"]


# -- generated sample files: two machines with the same system ids over the same hours -------------------------
N = 8            # 15-minute intervals per file


@pytest.fixture(scope="module")
def machines(tmp_path_factory) -> dict[str, object]:
    """The sample set's layout in small: the z16 writes ZOSA as subtypes 1 and 2, ZOSB as subtype 2 only, ZOSC as
    subtype 1; the z15 writes all three as subtype 1 and overlaps the z16 by four intervals (it starts one hour
    earlier).  A z/VM LPAR on the z16 adds a third kind of file of that machine."""
    out = tmp_path_factory.mktemp("two_machines")
    after = CecModel("z16", Z16_SEQ, zos_lpars())
    before = CecModel("z15", Z15_SEQ, zos_lpars(cpi_scale=1.12, l1mp_scale=1.05))
    paths = write_zos(out, after, AFTER_START, N, "after_z16",
                      {"ZOSA": ((1, 2), "rdw"), "ZOSB": ((2,), "vbs"), "ZOSC": ((1,), "bdw")}, seed=11, stated=True)
    paths += write_zos(out, before, AFTER_START - dt.timedelta(hours=1), N, "before_z15",
                       {"ZOSA": ((1,), "rdw"), "ZOSB": ((1,), "rdw"), "ZOSC": ((1,), "rdw")}, seed=12)
    paths.append(write_zvm(out, intervals=6))
    results = [read_file(p) for p in paths]
    cec_of = [sorted(set(r.samples["cec"].astype(str))) for r in results]
    assert all(len(c) == 1 for c in cec_of)
    return {"results": results, "cec": [c[0] for c in cec_of]}


def _workspace(results) -> Workspace:
    ws = Workspace(cache=False)
    ws.add_all(results)
    return ws


def test_sample_layout_z16_zosb_keeps_its_first_hour(machines):
    """The reported case: opened together, the z16 ZOSB (subtype 2) keeps every interval from AFTER_START on:
    8 CPUs x N intervals (N+1 running totals per CPU, the first a baseline), starting at AFTER_START."""
    ws = _workspace(machines["results"])
    iv = ws.intervals
    zosb = iv.loc[(iv["cec"].astype(str) == "3931-123F5") & (iv["system"].astype(str) == "ZOSB")]
    assert len(zosb) == 8 * N
    assert zosb["interval_start"].min() == pd.Timestamp(AFTER_START)
    assert not [f for f in ws.findings if f.code == "both-kinds" and f.key.get("system") == "ZOSB"]
    m = ws.metrics(by="lpar")
    row = m.loc[(m["cec"].astype(str) == "3931-123F5") & (m["lpar"].astype(str) == "ZOSB")].iloc[0]
    assert pd.Timestamp(row["interval_start"]) == pd.Timestamp(AFTER_START)


def _plain(df: pd.DataFrame) -> pd.DataFrame:
    """Rows in a canonical order, categoricals as text: frames of different workspaces compare by value."""
    df = df.copy()
    for c in df.columns:
        if isinstance(df[c].dtype, pd.CategoricalDtype):
            df[c] = df[c].astype(str)
    keys = [c for c in ("cec", "lpar", "system", "class", "cpu", "interval_end") if c in df.columns]
    return df.sort_values(keys, kind="stable").reset_index(drop=True)


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(st.data())
def test_more_files_never_change_a_machines_numbers(machines, data):
    """Property: for any subset of the files, each machine's interval rows (counters, times, quality) and its
    LPAR metrics equal those from that machine's files of the subset alone."""
    results, cecs = machines["results"], machines["cec"]
    pick = data.draw(st.lists(st.integers(0, len(results) - 1), min_size=1, unique=True), label="files")
    chosen = [results[i] for i in sorted(pick)]
    ws = _workspace(chosen)
    iv, m = ws.intervals, ws.metrics(by="lpar")
    for cec in sorted({cecs[i] for i in pick}):
        alone = _workspace([results[i] for i in sorted(pick) if cecs[i] == cec])
        got = _plain(_rows(iv, cec))
        exp = _plain(alone.intervals)
        extra = [c for c in got.columns if c not in exp.columns]   # counters only the other machine's files hold
        assert got[extra].isna().all().all()
        pd.testing.assert_frame_equal(got[list(exp.columns)], exp, check_exact=True)
        am = alone.metrics(by="lpar")
        pd.testing.assert_frame_equal(_plain(_rows(m, cec)), _plain(am), check_exact=True)
        assert len(exp) > 0 or not np.any([len(results[i].samples) for i in pick if cecs[i] == cec])


def test_report_and_info_of_all_files(machines, capsys):
    """What the analyst ran: `report --by lpar` over every file gives the z16 ZOSB from AFTER_START (the same row
    as its file alone), and `info` no longer claims its running totals as duplicates of the z15's deltas."""
    from app.cli import main

    paths = [r.file for r in machines["results"]]
    zosb16 = next(p for p in paths if "after_z16_ZOSB" in p)

    def zosb_row(files: list[str]) -> dict:
        assert main(["report", "--by", "lpar", "--format", "csv", *files]) == 0
        rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
        return next(r for r in rows if r["cec"] == "3931-123F5" and r["lpar"] == "ZOSB")

    together, alone = zosb_row(paths), zosb_row([zosb16])
    assert together["interval_start"].startswith(AFTER_START.strftime("%Y-%m-%dT%H:%M"))
    # every value of the file alone (the z/VM file adds the partition data of the machine's LPARs beside them)
    assert {k: v for k, v in together.items() if alone[k] != ""} == {k: v for k, v in alone.items() if v != ""}
    assert together["CPI"] != ""
    assert main(["info", *paths]) == 0
    assert "present both" not in "".join(line for line in capsys.readouterr().out.splitlines(True)
                                          if "ZOSB" in line)
