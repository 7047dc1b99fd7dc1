"""Issue 24 audit: shapes the bundled samples do not have, extracted in pieces out of order, give report's numbers.

Each case writes a file with the product's sample writers, cuts its records into thirds and extracts them
p2, p0, p1 (each piece a file of its own); ``query`` over the dataset must equal ``report`` (``Workspace``)
over the whole file, every metric (rtol 1e-9), per CPU and interval and per LPAR:

* a z17 subtype 2 file (running totals) whose collection run restarts mid-file (a new run start, a new baseline
  record per CPU), with SMT zIIPs;
* a z14 subtype 2 file whose counters are reset mid-run (they drop back near 0 with the same run start: smf113.md
  "a decrease means reset", the interval across it is discarded), cut right around the reset;
* z/VM MONWRITE pieces over a month boundary, each with its partition data (D0R16: z/OS LPARs, a capped LPAR and
  a coupling facility known only from it), where ``report`` reads the three pieces together.
"""

from __future__ import annotations

import datetime as dt
import io

import numpy as np
import pandas as pd
import pytest

from _fleet_helpers import assert_same
from app.dataset import Dataset
from app.dataset.query import QuerySpec, run_query
from app.engine import Workspace
from app.engine.metrics import metric_ids
from app.formats import monwrite_writer, read_bytes
from app.formats import smf113_writer as W
from app.sample.build import MIX_GCP, MIX_IFL, MIX_ZIIP, _order_by_time, _partitions, zos_lpars
from app.sample.model import CecModel, ClassModel, LparModel, make_samples, to_absolute
from app.formats.schema import is_counter_column


def _thirds(recs: list[bytes]) -> list[bytes]:
    n = len(recs)
    return [W.frame_rdw(recs[:n // 3]), W.frame_rdw(recs[n // 3:2 * n // 3]), W.frame_rdw(recs[2 * n // 3:])]


def _extract_p201(tmp_path, pieces: list[bytes], suffix: str) -> Dataset:
    ds = Dataset(tmp_path / "ds", create=True)
    for k in (2, 0, 1):
        p = tmp_path / f"p{k}{suffix}"
        p.write_bytes(pieces[k])
        assert ds.extract(p).status == "added", k
    return ds


def _same(ds: Dataset, files: list[tuple[str, bytes]]) -> None:
    ws = Workspace()
    ws.add_all([read_bytes(data, name) for name, data in files])
    for by in ("cpu", "lpar"):
        want = ws.metrics(by=by)
        assert len(want) > 0
        assert_same(run_query(ds, QuerySpec(by=by)), want, by, metric_ids(ws.formula_sets))


def test_a_collection_run_that_restarts_mid_file_in_pieces_out_of_order(tmp_path):
    cec = CecModel("z17", "00000000000017BB", [
        LparModel("ZSTA", "ZSTA", [ClassModel("GCP", 2, 60, 2.8, 2.9, MIX_GCP, 58),
                                   ClassModel("zIIP", 2, 45, 2.4, 2.2, MIX_ZIIP, 80, smt=True)])])
    s, _ = make_samples(cec, dt.datetime(2026, 5, 31, 18), 48, 900.0, seed=22)     # over a month boundary
    cut = np.sort(s["time"].unique())[20]
    a = to_absolute(s[s["time"] <= cut].reset_index(drop=True), seed=3)
    b = s[s["time"] > cut].copy()
    b["run_start"] = cut + np.timedelta64(60, "s")          # the run restarts a minute after the cut
    b = to_absolute(b.reset_index(drop=True), seed=4)
    recs = _order_by_time(W.encode_samples(pd.concat([a, b], ignore_index=True), 2))
    # by hand: 4 CPUs x (21 + 27) records + a baseline per CPU per run = 200 records
    assert len(recs) == 4 * 48 + 2 * 4
    ds = _extract_p201(tmp_path, _thirds(recs), ".rdw")
    _same(ds, [("whole.rdw", W.frame_rdw(recs))])
    # each CPU's intervals: 48, the first of the second run from its baseline (cut + 60 s) to cut + 900 s
    iv = run_query(ds, QuerySpec(by="cpu"))
    assert len(iv) == 4 * 48


def test_counters_reset_mid_run_in_pieces_out_of_order(tmp_path):
    cec = CecModel("z14", "00000000000014AA", [LparModel("PRDR", "PRDR", [ClassModel("GCP", 3, 60, 3.1, 3.2,
                                                                                     MIX_GCP, 60)])])
    s, _ = make_samples(cec, dt.datetime(2026, 4, 20), 36, 900.0, seed=31)
    ab = to_absolute(s)
    cnt = [c for c in ab.columns if is_counter_column(c)]
    reset_at = np.sort(ab["time"].unique())[18]
    rows = (ab["time"] >= reset_at).to_numpy()
    base = ab[ab["time"] == reset_at].set_index("cpu")[cnt].reindex(ab.loc[rows, "cpu"]).to_numpy(np.uint64)
    ab.loc[rows, cnt] = (ab.loc[rows, cnt].to_numpy(np.uint64) - base + np.uint64(1000)).astype(np.uint64)
    recs = _order_by_time(W.encode_samples(ab, 2))
    assert len(recs) == 3 * 37                      # 36 records and a baseline per CPU
    # cut right at the reset (the 19th time's records start at 3 + 3 * 18 = 57): [0, 57), [57, 80), [80, 111)
    pieces = [W.frame_rdw(recs[:57]), W.frame_rdw(recs[57:80]), W.frame_rdw(recs[80:])]
    ds = _extract_p201(tmp_path, pieces, ".rdw")
    _same(ds, [("whole.rdw", W.frame_rdw(recs))])


def test_zvm_pieces_with_partition_data_out_of_order(tmp_path, capsys):
    zl = LparModel("VMP3", "VMSYS3", [ClassModel("IFL", 4, 60, 2.2, 2.2, MIX_IFL, 70, smt=True,
                                                 thread_density=1.4)], os="z/VM", night=0.4)
    cec = CecModel("z14", "00000000000014AA", [zl])
    s, _ = make_samples(cec, dt.datetime(2026, 4, 30, 22), 36, 300.0, seed=61)    # 3 h over a month boundary
    ab = to_absolute(s)
    times = np.sort(s["time"].unique())
    parts = _partitions(times, zos_lpars(), zl, cec.cec, np.random.default_rng(6))
    cut = [times[0] - np.timedelta64(1, "h"), times[12], times[24], times[-1]]
    pieces = []
    for k in range(3):
        keep = (ab["time"] > cut[k]) & (ab["time"] <= cut[k + 1])
        pk = (parts["time"] > cut[k]) & (parts["time"] <= cut[k + 1])
        pieces.append(monwrite_writer.write_samples(ab[keep].reset_index(drop=True),
                                                    parts[pk].reset_index(drop=True), None, interval_s=300.0))
    ds = _extract_p201(tmp_path, pieces, ".mondata")
    _same(ds, [(f"p{k}.mondata", pieces[k]) for k in range(3)])
    # the command adds the partition data (run_query's frame has the counters' rows)
    from app.cli import main

    capsys.readouterr()
    assert main(["query", str(ds.root), "--by", "lpar", "--format", "csv"]) == 0
    lp = pd.read_csv(io.StringIO(capsys.readouterr().out), keep_default_na=False).set_index("lpar")
    # the partition data's LPARs: VMP3 with counters, ZOSA-ZOSD and CF01 from D0R16 alone
    assert set(lp.index) == {"VMP3", "ZOSA", "ZOSB", "ZOSC", "ZOSD", "CF01"}
    assert lp.loc["CF01", "data"] == "partition data only" and lp.loc["VMP3", "data"] == "counters"
    # report on the three pieces gives the same partition data, LPAR by LPAR
    assert main(["report", *(str(tmp_path / f"p{k}.mondata") for k in range(3)), "--by", "lpar", "--tz", "utc",
                 "--format", "csv"]) == 0
    rp = pd.read_csv(io.StringIO(capsys.readouterr().out), keep_default_na=False).set_index("lpar")
    cols = ["data", "partition_cpus", "processors", "weights", "capped", "partition_busy_sum_pct",
            "partition_busy_per_cpu_pct", "coverage_pct"]
    assert sorted(rp.index) == sorted(lp.index)
    for c in cols:
        for name in lp.index:
            a, b = lp.loc[name, c], rp.loc[name, c]
            if isinstance(a, float) or isinstance(b, float):
                assert np.isclose(float(a), float(b), rtol=1e-9), (name, c, a, b)
            else:
                assert str(a) == str(b), (name, c, a, b)
    assert str(lp.loc["ZOSD", "capped"]).lower() == "true" and int(lp.loc["ZOSD", "partition_cpus"]) == 2
    assert float(lp.loc["CF01", "partition_busy_sum_pct"]) > 0 and lp.loc["CF01", "weights"] == "ICF 0"


if __name__ == "__main__":          # pragma: no cover
    pytest.main([__file__, "-q"])
