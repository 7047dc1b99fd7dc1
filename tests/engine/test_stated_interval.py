"""SMF 113 identification section (smf113.md 5): the interval a record states is used and checked against CTM."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # tests/ for smf_builders
import smf_builders as B  # noqa: E402

from app.engine import Workspace  # noqa: E402
from app.formats import smf113  # noqa: E402
from app.formats import smf113_writer as W  # noqa: E402

MIN15 = 900 * 4096 * 10**6          # 15 minutes in TOD units (1 us = 4096)


def _rec(k: int, start_shift_s: float = 0.0) -> bytes:
    """Subtype-1 record k of one CPU: CTM = 12:00 + k*15 min; stated interval = previous CTM .. CTM."""
    ctm = B.CTM + k * MIN15
    start = ctm - MIN15 + int(start_shift_s * 4096 * 10**6)
    return W.encode_subtype1(dict(system="SYSA", cpu=1, core=0, cls_code=0, cpu_speed=5200, machine_type="3931",
                                  model="A01", seqcode="0000000000012345", cfvn=3, csvn=7, run_start_tod=B.CTS,
                                  time_tod=ctm, flags=0, counters={1: B.BASIC, 2: B.PROBLEM4},
                                  interval=(start, ctm)))


def _intervals(data: bytes):
    ws = Workspace()
    ws.add(smf113.read_smf(data, "id.smf"))
    return ws.intervals, ws.findings


def test_stated_interval_is_used_and_agrees():
    iv, findings = _intervals(_rec(1) + _rec(2))
    assert "interval-mismatch" not in [f.code for f in findings]
    # the second record states 12:15 .. 12:30 (= previous CTM .. CTM): 900 s
    row = iv.sort_values("time").iloc[1]
    assert row["interval_start"] == pd.Timestamp("2024-03-15 12:15") and row["interval_s"] == 900.0
    # the first record of the run would otherwise start at CTS 08:00; it states 12:00 .. 12:15
    first = iv.sort_values("time").iloc[0]
    assert first["interval_start"] == pd.Timestamp("2024-03-15 12:00") and first["interval_s"] == 900.0


def test_disagreement_with_ctm_is_a_finding():
    iv, findings = _intervals(_rec(1) + _rec(2, start_shift_s=120))   # states 12:17 although the last CTM is 12:15
    f = [f for f in findings if f.code == "interval-mismatch"]
    # the second record starts after the first: 230 bytes of spec 11.2 + the 40-byte identification section
    assert len(_rec(1)) == 270 and len(f) == 1 and f[0].severity == "warning" and f[0].offset == 270
    row = iv.sort_values("time").iloc[1]
    assert row["interval_s"] == 780.0          # the stated 12:17 .. 12:30 is used: 13 minutes
