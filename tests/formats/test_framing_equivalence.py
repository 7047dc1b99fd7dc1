"""The clean-file fast path of the RDW walk (offsets in a Python loop, headers checked with numpy, records
emitted in bulk) gives exactly what the careful per-record walk gives, and steps aside for anything irregular."""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # tests/ for smf_builders
import smf_builders as B  # noqa: E402

from app.formats import smf_framing as F  # noqa: E402

SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "samples"


def _framed(buf: bytes, fast: bool, monkeypatch, want=frozenset({113})):
    used = []
    real = F._clean_rdw

    def spy(w, inner):
        r = real(w, inner) if fast else False
        used.append(r)
        return r

    with monkeypatch.context() as m:
        m.setattr(F, "_clean_rdw", spy)
        fr = F.frame_records(buf, "f", want=want)
    recs = [(o, bytes(r)) for o, r in fr.records]
    return (fr.framing, recs, fr.type_counts, fr.other_bytes, [f.message for f in fr.findings]), any(used)


def _cases():
    other = [B.other(30, 120), B.other(70, 2000), B.other(30, 18)]
    st = [B.ST2_BYTES, B.ST1_BYTES]
    yield "mixed", b"".join(other[i % 3] + st[i % 2] for i in range(40))
    yield "zero-tail", b"".join(st * 4) + bytes(64)
    yield "cut", b"".join(st * 4)[:-10]
    bad = bytearray(b"".join(st * 4))
    bad[len(st[0]) + 2] = 1                                  # a non-zero segment byte in the second RDW
    yield "bad-seg", bytes(bad)
    long_ = bytearray(B.ST2_BYTES + bytes(16))               # a 113 record longer than its sections
    long_[0:2] = len(long_).to_bytes(2, "big")
    yield "over-long", bytes(long_) + B.ST2_BYTES
    for p in sorted(SAMPLES.glob("*smf113.rdw.gz")):
        yield p.name, gzip.decompress(p.read_bytes())
    for p in sorted((SAMPLES / "broken").glob("*smf113*")):
        yield p.name, p.read_bytes()


CASES = dict(_cases())


@pytest.mark.parametrize("name", list(CASES))
def test_fast_and_careful_walks_agree(name, monkeypatch):
    buf = CASES[name]
    fast, took = _framed(buf, True, monkeypatch)
    slow, _ = _framed(buf, False, monkeypatch)
    assert fast == slow
    # the fast path is taken exactly for the clean files
    clean = name == "mixed" or name.endswith(".rdw.gz")
    assert took == clean


def test_other_types_wanted_too(monkeypatch):
    buf = CASES["mixed"]
    fast, took = _framed(buf, True, monkeypatch, want=frozenset({30, 113}))
    slow, _ = _framed(buf, False, monkeypatch, want=frozenset({30, 113}))
    assert took and fast == slow
    assert fast[2] == {30: 27, 70: 13, 113: 40}    # 40 x (other, 113): other types cycle 30, 70, 30


def test_double_rdw_walk(monkeypatch):
    # an extra RDW (length + 4) in front of every record; walked directly (detection may call this BDW)
    st = [B.ST2_BYTES, B.ST1_BYTES, B.other(30, 300)]
    buf = b"".join((len(r) + 4).to_bytes(2, "big") + b"\0\0" + r for r in st * 5)

    def walk(fast: bool):
        w = F._Walker(buf, "f", frozenset({113}), None, None)
        if not fast:
            monkeypatch.setattr(F, "_clean_rdw", lambda w, inner: False)
        F.walk_rdw(w, 4)
        monkeypatch.undo()
        out = w.finish()
        return [(o, bytes(r)) for o, r in out.records], out.type_counts, out.other_bytes, out.findings, w.last

    assert F._clean_rdw(F._Walker(buf, "f", frozenset({113}), None, None), 4)
    fast, slow = walk(True), walk(False)
    assert fast == slow
    assert fast[1] == {113: 10, 30: 5} and fast[2] == 5 * 300
