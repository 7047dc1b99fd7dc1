"""The clean-only gzip inflate (app/formats/clean_inflate.py): a clean file's pieces come from zlib-ng (stdlib zlib
when zlib-ng cannot be imported) and are the bytes gzip.decompress gives; a file that is not clean (damaged,
failing its check, cut, with bytes after a member, over the size cap, a bomb past the ratio check) gives the
findings and stop sentence of the one-thread stdlib path byte for byte."""

from __future__ import annotations

import gzip
import random
import struct
import sys
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for _p in (str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "fuzz")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import pytest  # noqa: E402

import corpus as C  # noqa: E402
import app.formats as FM  # noqa: E402
from app.formats import clean_inflate as CI  # noqa: E402
from app.formats import gunzip_ahead as GA  # noqa: E402
from app.formats import smf113_writer as W  # noqa: E402
from app.formats.stream_dedup import StreamDedup  # noqa: E402

zlib_ng = pytest.importorskip("zlib_ng.zlib_ng")
RECS = C.smf_records(40)


@pytest.fixture(autouse=True)
def small_pieces(monkeypatch):
    """Pieces of 512 (stdlib path) and 4096 (clean inflate) compressed bytes; two threads."""
    monkeypatch.setattr(FM, "_IN_CHUNK", 512)
    monkeypatch.setattr(CI, "IN_CHUNK", 4096)
    monkeypatch.setenv("NESTSCOPE_THREADS", "2")


@pytest.fixture
def ng_calls(monkeypatch):
    """Every decompressobj zlib-ng made (its wbits)."""
    calls: list[int] = []
    real = zlib_ng.decompressobj

    def spy(wbits=zlib_ng.MAX_WBITS, *a, **k):
        calls.append(wbits)
        return real(wbits, *a, **k)
    monkeypatch.setattr(zlib_ng, "decompressobj", spy)
    return calls


def distinct(n: int, base: int = 0) -> bytes:
    """``n`` SMF 113 records in RDW framing, none repeating another: the last ten counters random (seeded by
    ``base``: the gzip holds several 4 KiB pieces of Huffman-coded bytes), the last one the record's number."""
    rng = random.Random(base)
    recs = []
    for i in range(n):
        r = bytearray(RECS[i % len(RECS)])
        r[-80:-8] = rng.randbytes(72)
        r[-8:] = (base + i).to_bytes(8, "big")
        recs.append(bytes(r))
    return W.frame_rdw(recs)


def run(raw: bytes, monkeypatch, ahead: bool, **kw):
    """FM.gunzip of ``raw``: (kept bytes, findings as (code, offset, message), stop, filter state)."""
    monkeypatch.setattr(GA, "PIPELINE_FROM", 0 if ahead else 1 << 40)
    dd = StreamDedup()
    data, found, stop = FM.gunzip(raw, "t.gz", dedup=dd, **kw)
    return (bytes(data), [(f.code, f.offset, f.message) for f in found], stop, (dd.count, dd.marks, dd.cum))


def test_a_clean_file_is_inflated_by_zlib_ng(monkeypatch, ng_calls):
    data = distinct(300) + distinct(200, base=1000)
    raw = gzip.compress(data[:30_000], mtime=0) + gzip.compress(data[30_000:], mtime=0) + bytes(100)
    assert CI.inflater() is zlib_ng
    pieces = list(CI.clean_pieces(raw, 1 << 30, 1000))
    assert b"".join(pieces) == data and len(pieces) > 1   # two members + zero padding: clean
    assert ng_calls == [31, 31]                          # 16 + MAX_WBITS: gzip, one object per member
    ng_calls.clear()
    got = run(raw, monkeypatch, ahead=True)
    assert got[0] == data and got[1] == [] and got[2] is None and ng_calls == [31, 31]
    assert got == run(raw, monkeypatch, ahead=False)


def test_without_zlib_ng_the_clean_inflate_is_stdlib_zlib(monkeypatch, ng_calls):
    monkeypatch.setitem(sys.modules, "zlib_ng", None)     # import zlib_ng raises ImportError
    monkeypatch.setitem(sys.modules, "zlib_ng.zlib_ng", None)
    assert CI.inflater() is zlib
    data = distinct(400)
    raw = gzip.compress(data, mtime=0)
    assert b"".join(CI.clean_pieces(raw, 1 << 30, 1000)) == data
    got = run(raw, monkeypatch, ahead=True)
    assert got[0] == data and got[1] == [] and ng_calls == []
    damaged = bytearray(raw)
    damaged[len(raw) // 2:len(raw) // 2 + 40] = bytes(40)
    assert list(CI.clean_pieces(bytes(damaged), 1 << 30, 1000))[-1] is CI.UNCLEAN


def _crc_bad(raw: bytes) -> bytes:
    """The gzip trailer's CRC-32 (RFC 1952: the last 8 bytes are CRC32, ISIZE) off by one."""
    crc, size = struct.unpack("<II", raw[-8:])
    return raw[:-8] + struct.pack("<II", crc ^ 1, size)


@pytest.mark.parametrize("how", ["damaged", "checksum", "cut", "garbage", "capped", "bomb"])
def test_a_file_not_clean_gives_the_stdlib_findings_byte_for_byte(monkeypatch, ng_calls, how):
    data = distinct(600)
    raw = gzip.compress(data, mtime=0)
    kw = {}
    if how == "damaged":
        second = bytearray(gzip.compress(distinct(300, base=5000), mtime=0))
        second[10] |= 0b110              # the first deflate block's BTYPE (bits 1-2, RFC 1951 3.2.3): 11, reserved
        raw = raw + bytes(second)
    elif how == "checksum":
        raw = _crc_bad(raw)
    elif how == "cut":
        raw = raw[:len(raw) * 3 // 4]
    elif how == "garbage":
        raw = raw + b"not a member" + gzip.compress(distinct(20, base=9000), mtime=0)
    elif how == "capped":
        kw["cap"] = len(data) - 1                        # one byte over the cap: stopped at the very end
    else:
        # 4 MiB of zeros gzip to ~4 KiB (deflate's best is ~1032:1); with the ratio check from 64 KiB on and a
        # ratio of 50 the stdlib path stops a few KiB of gzip in, and the clean inflate must give up before that
        monkeypatch.setattr(FM, "RATIO_FLOOR", 64 << 10)
        raw = gzip.compress(bytes(4 << 20), mtime=0)
        kw["ratio"] = 50
    one = run(raw, monkeypatch, ahead=False, **kw)
    ng_calls.clear()
    two = run(raw, monkeypatch, ahead=True, **kw)
    assert ng_calls and two == one                        # zlib-ng tried it; the findings are the stdlib ones
    codes = {c for c, _o, _m in one[1]}
    want = {"damaged": "gzip-damaged", "checksum": "gzip-checksum", "cut": "gzip-cut",
            "garbage": "gzip-trailing-garbage"}.get(how)
    if want:
        assert want in codes and one[2] is None
    elif how == "capped":
        assert "limit" in one[2] and len(one[0]) == len(data) - 1
    else:
        assert "expanded more than 50 times" in one[2] and len(one[0]) < 4 << 20


def test_a_file_at_exactly_the_cap_is_clean(monkeypatch, ng_calls):
    """The cap stops what is over it (gunzip_pieces: size > cap): a file of exactly ``cap`` bytes is read whole,
    by the clean inflate."""
    data = distinct(300)
    raw = gzip.compress(data, mtime=0)
    assert list(CI.clean_pieces(raw, len(data) - 1, 0))[-1] is CI.UNCLEAN
    assert b"".join(CI.clean_pieces(raw, len(data), 0)) == data
    got = run(raw, monkeypatch, ahead=True, cap=len(data))
    assert got == run(raw, monkeypatch, ahead=False, cap=len(data)) and got[2] is None and got[0] == data


def test_the_prefetch_inflates_with_zlib_ng_on_its_thread(tmp_path, monkeypatch, ng_calls):
    """The command line's prefetch (app/formats/prefetch.py) runs the same clean inflate: zlib-ng, on its thread;
    the reader takes its pieces and reads what the plain read gives."""
    import threading

    from app.formats import prefetch as PF

    names: list[str] = []
    real = zlib_ng.decompressobj
    monkeypatch.setattr(zlib_ng, "decompressobj", lambda *a: (names.append(threading.current_thread().name),
                                                               real(*a))[1])
    monkeypatch.setattr(GA, "PIPELINE_FROM", 0)
    path = tmp_path / "a.gz"
    data = distinct(500)
    path.write_bytes(gzip.compress(data, mtime=0))
    try:
        th = PF.start(["export", str(path)])
        th.join(10)
        entry = PF._entries[0]
        assert entry.done and not entry.unclean and names == ["nestscope-prefetch"]
        got, found, stop = FM.gunzip(path.read_bytes(), str(path), dedup=StreamDedup())
    finally:
        PF.forget()
    assert got == data and found == [] and stop is None
    assert names == ["nestscope-prefetch"] and entry.taken     # taken: no second inflate on the reader's side
