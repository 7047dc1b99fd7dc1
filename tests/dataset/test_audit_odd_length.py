"""Audit of issue 24's counted-once property for the odd-length mark, on files whose LPARs change their interval
length within the file (helper audit20, twentieth session).

The odd20 tests (tests/dataset/test_odd_length.py) cover subtype-2 running totals of one LPAR with one change.
These are the cases the black-box audit added that they do not: subtype-1 deltas with stated intervals
(identification section) and several changes, two LPARs of different usual lengths in one file (one of running
totals, one of deltas), and a query pruned to the month after the change.

The data: samples of the bundled z16 files (CEC 3931-123F5) retimed by a schedule of interval lengths, each
counter's growth scaled by the new length over the old 15 minutes (the same rates: nothing implausible), written
as SMF 113 records and cut into pieces at the record where the length changes.  Expected marks are counted by
hand beside each test: an interval is odd-length when more than 10 % away from its LPAR's usual length, the median
of the LPAR's intervals measured between two samples of a CPU (report's rule).
"""

from __future__ import annotations

import gzip

import numpy as np
import pandas as pd
import pytest

from _fleet_helpers import SAMPLES, assert_same
from app.dataset import Dataset
from app.dataset.query import QuerySpec, run_query
from app.engine import Workspace
from app.engine.catalog import load_formula_sets
from app.engine.metrics import metric_ids
from app.formats import read_bytes, read_file
from app.formats.schema import is_counter_column
from app.formats.smf113_writer import encode_samples, frame_rdw

IDS = metric_ids(load_formula_sets())
BY = ("cpu", "lpar", "interval")
Z16 = {p.name.split("_")[2]: p for p in SAMPLES if p.name.startswith("after_z16")}   # ZOSA ZOSB ZOSC


def _samples(lpar: str, kind: str) -> pd.DataFrame:
    s = read_file(Z16[lpar]).samples
    s = s[s["kind"].astype(str) == kind].reset_index(drop=True)
    for c in ("lpar", "system", "class", "kind", "cec", "machine_type", "model", "serial", "os", "source"):
        if c in s and isinstance(s[c].dtype, pd.CategoricalDtype):
            s[c] = s[c].astype(str)
    return s


def retime(s: pd.DataFrame, minutes: list[int], base: str, stated: bool) -> pd.DataFrame:
    """The first intervals of ``s`` (15 minutes apart) retimed to ``minutes`` (one length per interval) from the
    run's start ``base``.  Running totals: the baseline sample at ``base``, sample i at base + sum(minutes[:i]);
    deltas: sample i ends interval i.  Each counter's growth (running totals) or delta is scaled by the new length
    over 15 minutes.  ``stated``: rec_start/rec_end = the sample before (the run's start for the first) and this."""
    absolute = (s["kind"] == "absolute").all()
    old = np.sort(s["time"].unique())[:len(minutes) + (1 if absolute else 0)]
    s = s[s["time"].isin(old)].sort_values(["cpu", "time"], kind="stable").reset_index(drop=True)
    cum = np.concatenate([[0], np.cumsum(minutes)])
    new = pd.Timestamp(base) + pd.to_timedelta(cum if absolute else cum[1:], unit="min")
    pos = np.searchsorted(old, s["time"].to_numpy())
    ctr = [c for c in s.columns if is_counter_column(c) and np.issubdtype(s[c].dtype, np.integer)]
    for _cpu, g in s.groupby("cpu", sort=False):
        i = g.index.to_numpy()
        v = g[ctr].to_numpy(np.float64)           # (below 2**53: exact)
        if absolute:
            fac = np.array(minutes, float)[pos[i][1:] - 1] / 15
            v = np.vstack([v[:1], v[:1] + np.cumsum(np.floor(np.diff(v, axis=0) * fac[:, None]), axis=0)])
        else:
            v = np.floor(v * (np.array(minutes, float)[pos[i]] / 15)[:, None])
        s.loc[i, ctr] = v.astype(np.uint64)
    shift = s["local_time"] - s["time"]
    s["time"] = new[pos]
    s["local_time"] = s["time"] + shift
    s["run_start"] = pd.Timestamp(base)
    s = s.drop(columns=[c for c in ("rec_start", "rec_end") if c in s])
    if stated:
        prev = pd.Series(np.where(pos > 0, new[np.maximum(pos - 1, 0)], pd.Timestamp(base)), index=s.index)
        s = pd.concat([s, pd.DataFrame({"rec_start": prev, "rec_end": s["time"]})], axis=1)
    return s


def records(parts: list[tuple[pd.DataFrame, int]]) -> tuple[list[bytes], np.ndarray]:
    """The SMF 113 records of (samples, subtype) parts in a dump's order (time, LPAR, CPU), and each one's time."""
    recs, keys = [], []
    for s, subtype in parts:
        s = s.sort_values(["time", "cpu"], kind="stable")
        recs += encode_samples(s, subtype)
        keys += list(zip(s["time"].to_numpy("datetime64[ns]").view(np.int64).tolist(), s["lpar"], s["cpu"]))
    order = sorted(range(len(recs)), key=keys.__getitem__)
    return [recs[i] for i in order], np.array([keys[i][0] for i in order], np.int64)


def at(times: np.ndarray, when: str) -> int:
    """The first record of the sample ending at ``when`` (a cut there leaves its interval's start in the piece
    before)."""
    return int(np.searchsorted(times, pd.Timestamp(when).value))


def extract(ds: Dataset, tmp_path, blobs: list[tuple[bytes, bool]]) -> None:
    for i, (blob, gz) in enumerate(blobs):
        p = tmp_path / (f"piece{i}.smf" + (".gz" if gz else ""))
        p.write_bytes(gzip.compress(blob, 1) if gz else blob)
        assert ds.extract(p).status == "added"


def report(recs: list[bytes], start=None) -> dict[str, pd.DataFrame]:
    ws = Workspace()
    ws.add_all([read_bytes(frame_rdw(recs), "whole.smf")])
    return {by: ws.metrics(by=by, start=start) for by in BY}


def odd(frame: pd.DataFrame) -> np.ndarray:
    return frame["quality"].fillna("").str.contains("odd-length").to_numpy()


def test_deltas_with_stated_intervals_and_several_changes_cut_at_every_change(tmp_path):
    """ZOSC subtype-1 deltas with identification sections (12 CPUs), 48 intervals: 16 x 15 min, 12 x 5, 12 x 15,
    8 x 30.  Measured (from the CPU's sample before; the first back to the run's start is not): 27 x 900 s, 12 x
    300, 8 x 1800 per CPU -> median (the 24th of 47) 900 s; odd-length: the 12 + 8 = 20 others per CPU,
    20 x 12 = 240 CPU rows.  Cut where each length starts (4 pieces of one length each), extracted last first,
    two gzipped: query = report, the 240 marks included."""
    s = retime(_samples("ZOSC", "delta"), [15] * 16 + [5] * 12 + [15] * 12 + [30] * 8, "2026-11-16", stated=True)
    recs, t = records([(s, 1)])
    assert len(recs) == 48 * 12
    cuts = [0, at(t, "2026-11-16 04:05"), at(t, "2026-11-16 05:15"), at(t, "2026-11-16 08:30"), len(recs)]
    assert cuts == [0, 16 * 12, 28 * 12, 40 * 12, 48 * 12]           # (4 h; 4 h + 1 h; then 3 h more)
    want = report(recs)
    assert int(odd(want["cpu"]).sum()) == 240
    assert not want["cpu"]["quality"].fillna("").str.contains("implausible").any()
    pieces = [(b"".join(recs[a:b]), i % 2 == 1) for i, (a, b) in enumerate(zip(cuts[:-1], cuts[1:]))]
    ds = Dataset(tmp_path / "ds", create=True)
    extract(ds, tmp_path, pieces[::-1])
    for by in BY:
        assert_same(run_query(ds, QuerySpec(by=by)), want[by], by, IDS)


def test_two_lpars_of_different_usual_lengths_in_one_file_cut_at_their_changes(tmp_path):
    """One file of two LPARs of CEC 3931-123F5: ZOSB running totals (subtype 2, 8 CPUs) 30 x 15 min then 10 x 5
    (usual 900 s: the 10 x 8 = 80 rows of 300 s odd-length) and ZOSC deltas with stated intervals (subtype 1, 12
    CPUs) 12 x 15 min then 28 x 5 (measured: 11 x 900 and 28 x 300 per CPU, usual 300 s: the 12 x 12 = 144 rows
    of 900 s odd-length; the first, back to the run's start, is 900 s too).  224 marks in all, each LPAR by its
    own usual length.  Cut at ZOSC's change (3 h) and ZOSB's (7 h 30), the middle piece first."""
    b = retime(_samples("ZOSB", "absolute"), [15] * 30 + [5] * 10, "2026-11-18", stated=False)
    c = retime(_samples("ZOSC", "delta"), [15] * 12 + [5] * 28, "2026-11-18", stated=True)
    recs, t = records([(b, 2), (c, 1)])
    cut1, cut2 = at(t, "2026-11-18 03:05"), at(t, "2026-11-18 07:35")
    want = report(recs)
    marks = want["cpu"][odd(want["cpu"])]
    assert marks.groupby("lpar").size().to_dict() == {"ZOSB": 80, "ZOSC": 144}
    assert not want["cpu"]["quality"].fillna("").str.contains("implausible").any()
    ds = Dataset(tmp_path / "ds", create=True)
    extract(ds, tmp_path, [(b"".join(recs[cut1:cut2]), False), (b"".join(recs[cut2:]), True),
                           (b"".join(recs[:cut1]), False)])
    for by in BY:
        assert_same(run_query(ds, QuerySpec(by=by)), want[by], by, IDS)


def test_a_query_pruned_to_the_month_after_the_change_marks_by_the_whole_dataset(tmp_path):
    """ZOSB running totals (8 CPUs): 32 x 15 min ending at 2026-11-01 00:00 (October), then 16 x 5 min
    (November).  Usual length over the dataset 900 s, so the 16 x 8 = 128 November rows are odd-length, though
    November alone holds 5-minute intervals only.  A query from 2026-11-01 reads November's parts only (pruned) and
    must still mark them, as report --from does; the two months extracted as two pieces, November first."""
    s = retime(_samples("ZOSB", "absolute"), [15] * 32 + [5] * 16, "2026-10-31 16:00", stated=False)
    recs, t = records([(s, 2)])
    cut = at(t, "2026-11-01 00:00:01")                 # the October piece ends with the sample at midnight
    nov = pd.Timestamp("2026-11-01")
    want = report(recs, start=nov)
    assert len(want["cpu"]) == 128 and odd(want["cpu"]).all()
    ds = Dataset(tmp_path / "ds", create=True)
    extract(ds, tmp_path, [(b"".join(recs[cut:]), False), (b"".join(recs[:cut]), False)])
    for by in BY:
        assert_same(run_query(ds, QuerySpec(by=by, start=nov)), want[by], by, IDS)


def test_a_dataset_begun_before_the_measured_bit_marks_as_report_once_extended(tmp_path, monkeypatch):
    """A dataset begun by the NestScope before odd20 (4ed77a1: its intervals carry no RUN_START_BIT, the dataset
    format is the same version 3, so extract adds to it) and extended after: the usual length must not be taken
    over the new files' intervals alone.  ZOSB running totals: October 32 x 15 min (the baseline at 16:00, every
    interval measured) extracted as the older code stored it (compute_intervals without the bit: what 4ed77a1's
    store wrote), then November 16 x 5 min extracted now.  Report over the whole file: usual 900 s (256 x 900 s
    against 128 x 300 s), the 128 November rows odd-length, October's 256 not.  Found from the command line:
    October extracted by 4ed77a1, November by odd20 fc98efe -> stats.json usual 300.0 and every mark inverted
    (1,112 October rows of the audit file marked, its 416 November rows not)."""
    import app.engine.deltas as deltas

    s = retime(_samples("ZOSB", "absolute"), [15] * 32 + [5] * 16, "2026-10-31 16:00", stated=False)
    recs, t = records([(s, 2)])
    cut = at(t, "2026-11-01 00:00:01")
    want = report(recs)
    assert int(odd(want["cpu"]).sum()) == 128
    ds = Dataset(tmp_path / "ds", create=True)
    real = deltas.compute_intervals

    def before_odd20(*a, **k):          # the intervals as 4ed77a1 stored them: no run-start bit
        k.pop("run_start_bit", None)
        return real(*a, **k)

    monkeypatch.setattr(deltas, "compute_intervals", before_odd20)
    extract(ds, tmp_path, [(b"".join(recs[:cut]), False)])
    monkeypatch.setattr(deltas, "compute_intervals", real)
    (tmp_path / "later").mkdir()
    extract(ds, tmp_path / "later", [(b"".join(recs[cut:]), False)])
    for by in BY:
        assert_same(run_query(ds, QuerySpec(by=by)), want[by], by, IDS)


def test_running_totals_with_stated_intervals_a_later_file_fills_the_gap(tmp_path):
    """Not an odd-length case (one interval length throughout), found by the same audit (seed 2018 of its
    harness, a subtype-2 file with identification sections cut at its length change): ZOSA running totals
    (subtype 2, 12 CPUs) whose records state their interval (identification section: start = the sample before,
    end = this one), 24 x 15 min.  Extracted as samples 0-9, then 14-24, then 10-13 (the gap).  The second file's
    first interval (ending at sample 14) is computed from the dataset's sample 9 (the counters of 75 minutes) but
    keeps the stated 15-minute start, so it is not seen as spanning a gap: the file that fills the gap does not
    replace it, and it stays with 5 x the counters over 15 minutes (busy > 100 %: implausible, left out).  Report
    over the whole file: every interval clean.  On odd20 fc98efe and main 4ed77a1 alike; from the command line
    (seed 2018: pieces 0-685 and 852-2316 of the audit's file, then 557-852): 12 CPU rows with every metric empty
    and quality 'implausible,left-out' where report has numbers (LPARCPU 73.3 for CPU 0), and the LPAR's sums off
    (CPI 3.6466 against report's 3.6429)."""
    s = retime(_samples("ZOSA", "absolute"), [15] * 24, "2026-11-20", stated=True)
    recs, _t = records([(s, 2)])
    assert len(recs) == 25 * 12
    want = report(recs)
    assert not want["cpu"]["quality"].fillna("").str.contains("implausible").any()
    ds = Dataset(tmp_path / "ds", create=True)
    extract(ds, tmp_path, [(b"".join(recs[:10 * 12]), False), (b"".join(recs[14 * 12:]), False),
                           (b"".join(recs[10 * 12:14 * 12]), False)])
    for by in BY:
        assert_same(run_query(ds, QuerySpec(by=by)), want[by], by, IDS)


def test_a_file_extracted_in_chunks_over_a_stored_piece_keeps_each_delta_interval_15_minutes(tmp_path, monkeypatch):
    """Not an odd-length case (15 minutes throughout), found by the audit (seed 3016 of its harness, chunk 1 MB):
    the z15 ZOSA subtype-1 deltas (12 CPUs, a record of 1,622 bytes every 15 minutes, no identification section)
    as SMF records; records 509-1079 (samples 42-89) extracted first, then records 0-1427 (samples 0-118, a
    superset) in 1 MB chunks (NESTSCOPE_EXTRACT_CHUNK_MB=1: 3 chunks).  Report over records 0-1427: every
    interval 900 s.  The dataset instead gives the 12 rows ending at sample 89 (2026-10-05 22:30) an interval
    from sample 42's time (10:45: 11 h 45 min), so their busy is 1/47 of report's (LPARCPU 0.88 against 41.3)
    and they are marked odd-length; the extract says '24 stored interval(s) spanning this file's samples
    replaced' where one chunk says 12.  Read whole (no chunks) the same two files give report's numbers.  On odd20
    fc98efe and main 4ed77a1 alike."""
    s = read_file(next(p for p in SAMPLES if p.name.startswith("before_z15_ZOSA"))).samples
    for c in ("lpar", "system", "class", "kind", "cec", "machine_type", "model", "serial", "os", "source"):
        if c in s and isinstance(s[c].dtype, pd.CategoricalDtype):
            s[c] = s[c].astype(str)
    recs, _t = records([(s, 1)])
    assert len(recs) == 2304 and len(recs[0]) == 1622
    whole = recs[:1428]
    want = report(whole)
    assert len(want["cpu"]) == 1428
    ds = Dataset(tmp_path / "ds", create=True)
    extract(ds, tmp_path, [(b"".join(recs[509:1080]), False)])
    monkeypatch.setenv("NESTSCOPE_EXTRACT_CHUNK_MB", "1")
    (tmp_path / "later").mkdir()
    extract(ds, tmp_path / "later", [(b"".join(whole), False)])
    for by in BY:
        assert_same(run_query(ds, QuerySpec(by=by)), want[by], by, IDS)


def test_a_file_whose_delta_lpar_stops_before_its_running_totals_lpar_is_added_in_chunks(tmp_path, monkeypatch):
    """Not an odd-length case (15 minutes throughout), found by the audit (seed 1005 of its harness, a piece of a
    three-LPAR file, chunk 1 MB: the piece was 'not added', so 2,040 CPU rows were missing from the query): one
    file of CEC 3931-123F5 holding ZOSB running totals (subtype 2, 8 CPUs, 120 samples: 30 h) and ZOSC deltas
    (subtype 1, 12 CPUs, its first 20 intervals: 5 h), records in time order (1,200 records, about 1.9 MB).  Read
    whole it is added; in 1 MB chunks (NESTSCOPE_EXTRACT_CHUNK_MB=1), where a later chunk holds ZOSB's running
    totals only, extract fails the whole file: 'not added (ArrowInvalid: Float value nan was truncated
    converting to uint64)'.  (ZOSB stopping first, or two subtype-2 LPARs, extract fine.)  On odd20 ab7c00a
    and main 4ed77a1 alike; the default chunk is 32 MB, so a dump of that size with an LPAR of subtype-1
    records stopping early would fail the same."""
    b = retime(_samples("ZOSB", "absolute"), [15] * 119, "2026-11-22", stated=False)
    c = retime(_samples("ZOSC", "delta"), [15] * 20, "2026-11-22", stated=False)
    recs, _t = records([(b, 2), (c, 1)])
    assert len(recs) == 120 * 8 + 20 * 12
    want = report(recs)
    monkeypatch.setenv("NESTSCOPE_EXTRACT_CHUNK_MB", "1")
    ds = Dataset(tmp_path / "ds", create=True)
    extract(ds, tmp_path, [(b"".join(recs), False)])
    for by in BY:
        assert_same(run_query(ds, QuerySpec(by=by)), want[by], by, IDS)
