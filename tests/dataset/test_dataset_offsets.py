"""The intervals table's ``utc_offset_s`` (dataset format 3, issue 26): at extract the engine's per-interval
offsets (``app.engine.timezone.add_utc_offsets``: the offset the record ending each interval states), so an
extracted Europe/Berlin system has +3600 s up to the interval ending 00:45 UTC on 2026-03-29 and +7200 s from
the one ending 01:00 UTC on (hand-placed: the switch to CEST at 01:00 UTC).  The samples table keeps each
record's own offset, so a file extracted before the one that precedes it still gets the right offsets for the
intervals computed again across the boundary."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
import tz_builders as T  # noqa: E402

from app.dataset import Dataset  # noqa: E402
from app.engine import Workspace  # noqa: E402

SWITCH = pd.Timestamp("2026-03-29 01:00")


def _table(ds: Dataset, table: str = "intervals") -> pd.DataFrame:
    import pyarrow.parquet as pq

    f = pd.concat([pq.read_table(p, partitioning=None).to_pandas() for p in ds.parts(table)], ignore_index=True)
    tcol = "t_end" if table == "intervals" else "time"
    f["t"] = pd.to_datetime(f[tcol]).dt.tz_convert(None) if f[tcol].dt.tz is not None else f[tcol]
    return f.sort_values(["cpu", "t"], ignore_index=True)


def _engine(paths) -> pd.DataFrame:
    ws = Workspace(cache=False)
    ws.add_all([T.read(p) for p in paths])
    iv = ws.intervals
    return pd.DataFrame({"cpu": iv["cpu"].to_numpy(np.int64), "t": iv["interval_end"].to_numpy(),
                         "off": iv["utc_offset_s"].to_numpy(np.float64)}).sort_values(["cpu", "t"], ignore_index=True)


def test_extracted_offsets_are_the_engines(tmp_path):
    f = T.write_zos(tmp_path, T.zos_samples(days=2), name="berlin.smf")
    ds = Dataset(tmp_path / "ds", create=True)
    assert ds.extract(f).status == "added"
    iv = _table(ds)
    assert str(iv["utc_offset_s"].dtype) == "int32"
    off = iv["utc_offset_s"].to_numpy(np.int64)
    before = iv["t"].to_numpy() < np.datetime64(SWITCH)
    assert (off[before] == 3600).all() and (off[~before] == 7200).all()
    assert before.sum() == 2 * 99 and (~before).sum() == 2 * 93     # ends 03-28 00:15 .. 03-29 00:45: 99 per CPU
    eng = _engine([f])
    assert len(eng) == len(iv)
    np.testing.assert_array_equal(iv["utc_offset_s"].to_numpy(np.float64), eng["off"].to_numpy())
    s = _table(ds, "samples")                         # each record's own offset
    assert set(s.loc[s["t"] < SWITCH, "utc_offset_s"]) == {3600} and set(s.loc[s["t"] >= SWITCH, "utc_offset_s"]) == {7200}


def test_a_system_without_local_time_stores_null(tmp_path):
    f = T.write_zos(tmp_path, T.zos_samples(zone=None, days=1), name="utc.smf")
    ds = Dataset(tmp_path / "ds", create=True)
    assert ds.extract(f).status == "added"
    iv = _table(ds)
    eng = _engine([f])
    if eng["off"].isna().all():                       # the writer left TME/DTE unusable: unknown, NULL
        assert iv["utc_offset_s"].isna().all()
    else:                                             # local time stated as UTC: 0, never a guess
        np.testing.assert_array_equal(iv["utc_offset_s"].to_numpy(np.float64), eng["off"].to_numpy())


@pytest.mark.parametrize("order", ["later-first", "in-order"])
def test_running_totals_extracted_out_of_order_keep_each_intervals_offset(tmp_path, order):
    """SMF 113 subtype 2 (running totals) split at the switch: the later (CEST) half extracted first has no
    interval at its first record; the earlier (CET) half, extracted second, computes it again from the stored
    record, whose offset (+7200) comes from the samples table, not from the CET half's records."""
    from app.formats import smf113_writer
    from app.sample.model import to_absolute

    totals = to_absolute(T.zos_samples(days=1, start=pd.Timestamp("2026-03-28 12:00").to_pydatetime()))

    def write(frame, name):                           # one run of running totals, cut into files
        p = tmp_path / name
        smf113_writer.write_smf_file(p, smf113_writer.encode_samples(frame.reset_index(drop=True), 2), framing="rdw")
        return p
    cut = (totals["time"] < SWITCH).to_numpy()
    a, b, whole = write(totals.loc[cut], "a.smf"), write(totals.loc[~cut], "b.smf"), write(totals, "whole.smf")
    ds = Dataset(tmp_path / "ds", create=True)
    for p in ([b, a] if order == "later-first" else [a, b]):
        assert ds.extract(p).status == "added"
    iv = _table(ds)
    eng = _engine([whole])
    assert len(iv) == len(eng)
    np.testing.assert_array_equal(iv["t"].to_numpy(), eng["t"].to_numpy())
    np.testing.assert_array_equal(iv["utc_offset_s"].to_numpy(np.float64), eng["off"].to_numpy())
    first_cest = iv.loc[iv["t"] == SWITCH, "utc_offset_s"]
    assert len(first_cest) == 2 and set(first_cest) == {7200}           # the interval across the boundary
