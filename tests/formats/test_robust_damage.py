"""Issue 20, "damaged files lose only what is damaged": each case built with the project's writers (or the
spec-record corpus of tests/fuzz/corpus.py), damaged here, and read back."""

from __future__ import annotations

import struct
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for _p in (str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "fuzz")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import pytest  # noqa: E402

import corpus as C  # noqa: E402
from app.formats import read_bytes  # noqa: E402
from app.formats import smf113 as S  # noqa: E402
from app.formats import smf113_layout as L  # noqa: E402
from app.formats import smf113_writer as W  # noqa: E402

F = "t.bin"
N = 30
REC = 244                                   # length of every corpus record (spec 11.1 record)
ALL = [C.smf_b0(i) for i in range(N)]       # B0 of the records in file order: 1000 + i


def codes(r):
    return [f.code for f in r.findings]


def b0(r):
    return sorted(r.samples["B0"].astype(int).tolist())


# ------------------------------------------------------------------ one bad counter-set entry

def _csn_zero(rec: bytes, entry: int = 0) -> bytes:
    """The record with the CSN (counter count) of counter-set entry ``entry`` set to 0 (spec 6.3)."""
    r = bytearray(rec)
    dof = struct.unpack_from(">I", r, 44)[0]
    csof = struct.unpack_from(">I", r, dof + L.S2_CSOF)[0]
    csln = struct.unpack_from(">H", r, dof + L.S2_CSLN)[0]
    struct.pack_into(">H", r, csof + entry * csln + L.S2_CSN, 0)
    return bytes(r)


@pytest.mark.parametrize("entry", [0, 1])
def test_counter_set_entry_with_csn_0_costs_only_its_record(entry):
    recs = C.smf_records(N)
    recs[5] = _csn_zero(recs[5], entry)
    r = read_bytes(W.frame_rdw(recs), F)
    assert b0(r) == [b for i, b in enumerate(ALL) if i != 5]          # 29 of 30: only record 5 is lost
    bad = [f for f in r.findings if f.code == "bad-counter-set"]
    assert len(bad) == 1 and bad[0].offset == 5 * REC + 0               # record 5 starts at 5 x 244 (RDW included)
    assert "decode-failure" not in codes(r)


def test_a_failing_shape_costs_only_its_records(monkeypatch):
    """Last line of defence: an unexpected error decoding one shape loses that shape's records, not the file."""
    recs = C.smf_records(N)
    recs[7] = _csn_zero(recs[7], 1)                   # its own shape (the counter-set entries differ)
    real = S._decode_shape

    def boom(dec, sh, want=None):
        if dec.mat.shape[0] == 1:
            raise IndexError("damaged")
        return real(dec, sh, want)

    monkeypatch.setattr(S, "_decode_shape", boom)
    monkeypatch.setattr(L, "_sets_st2", lambda r, sh, cfvn, csvn, low: None)    # no set problems: decode runs
    r = read_bytes(W.frame_rdw(recs), F)
    assert len(r.samples) == N - 1
    bad = [f for f in r.findings if f.code == "decode-failure"]
    assert len(bad) == 1 and bad[0].offset == 7 * REC
