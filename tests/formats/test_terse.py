"""TERSE (AMATERSE PACK / SPACK) decoding: real z/OS pairs byte for byte on both paths, tersed SMF 113 equal to
plain, damage, bombs, cancel, detection."""

from __future__ import annotations

import gzip
from contextlib import nullcontext
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.formats import kernel, read_bytes, terse
from app.formats import terse_codec as T
from app.formats.schema import Cancelled
from tests.terse_builders import header, pack_codes, rdw_records, tersed

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data" / "terse"
PAIRS = sorted(p.name for p in (DATA / "TERSED").iterdir())
SAMPLES = ROOT / "resources" / "samples"
PATHS = ["compiled", "pure"]

needs_kernel = pytest.mark.skipif(not terse.compiled(), reason="compiled TERSE loop not built")


def _path(name: str):
    if name == "compiled" and not terse.compiled():
        pytest.skip("compiled TERSE loop not built")
    return kernel.pure() if name == "pure" else nullcontext()


def _unterse(raw, path: str = "compiled", **kw):
    with _path(path):
        return terse.unterse(raw, "t.trs", **kw)


def _rdw(records: list[bytes]) -> bytes:
    return b"".join((len(r) + 4).to_bytes(2, "big") + b"\0\0" + r for r in records)


@pytest.fixture(scope="module")
def smf():
    """The first 300 records of the bundled ZOSA sample (RDW), as records and as a plain RDW file."""
    recs = rdw_records(gzip.decompress((SAMPLES / "after_z16_ZOSA_smf113.rdw.gz").read_bytes()))[:300]
    return recs, _rdw(recs)


# ----------------------------------------------------------------------------- real AMATERSE output

@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("name", PAIRS)
def test_real_pairs_byte_identical(name, path):
    # expected: the same data set downloaded by z/OS FTP in binary mode with SITE RDW (tests/data/terse/SOURCE.md)
    want = (DATA / "ZOSBINARY" / name.rsplit(".", 1)[0]).read_bytes()
    out, info = _unterse((DATA / "TERSED" / name).read_bytes(), path)
    assert bytes(out) == want
    assert info.findings == [] and info.stop is None and info.size == len(want)


def test_real_headers_and_record_counts():
    # VB.ALICE29.TXT.PACK starts X'0201 00FB 0C00 6D5E 00000000': 02 = PACK, 01 = variable, record data up to
    # X'FB' = 251 bytes (LRECL 255), flags X'0C' (MVS), block size X'6D5E' = 27998; alice29.txt has 3,609 lines
    h = terse.parse_header((DATA / "TERSED" / "VB.ALICE29.TXT.PACK").read_bytes())
    assert (h.mode, h.recfm, h.lrecl, h.dataset_lrecl, h.blksize) == ("PACK", "VB", 251, 255, 27998)
    _, info = terse.unterse((DATA / "TERSED" / "VB.ALICE29.TXT.SPACK").read_bytes(), "x")
    assert info.header.mode == "SPACK" and info.records == 3609
    # FB.CP.HTML: LRECL 180 (X'00B4'); 116,100 bytes = 645 records of 180
    _, info = terse.unterse((DATA / "TERSED" / "FB.CP.HTML.PACK").read_bytes(), "x")
    assert (info.header.recfm, info.header.lrecl, info.records) == ("FB", 180, 645)


# ----------------------------------------------------------------------------- tersed SMF 113

@pytest.mark.parametrize("path", PATHS)
@pytest.mark.parametrize("mode", ["PACK", "SPACK"])
def test_tersed_smf_unterses_to_the_rdw_file(smf, mode, path):
    recs, plain = smf
    if path == "pure":                            # the pure loop is slow: fewer records
        recs = recs[:60]
        plain = _rdw(recs)
    raw = tersed(recs, mode, variable=True, lrecl=32756, spanned=True)
    out, info = _unterse(raw, path)
    assert bytes(out) == plain and info.records == len(recs)
    if mode == "PACK":
        assert len(raw) < len(plain) / 3          # the encoder really compresses (SMF records repeat a lot)


@pytest.mark.parametrize("mode", ["PACK", "SPACK"])
def test_tersed_smf_reads_the_same_counters(smf, mode):
    recs, plain = smf
    raw = tersed(recs, mode, variable=True, lrecl=32756, spanned=True)
    a = read_bytes(plain, "s.rdw")
    b = read_bytes(raw, "s.trs")
    assert a.framing == "rdw" and b.framing == f"terse {mode} + RDW"
    assert b.records == a.records and len(b.samples) == len(a.samples) == 300
    assert b.samples.drop(columns=["source"]).equals(a.samples.drop(columns=["source"]))
    assert b.meta["terse"] == {"mode": mode, "recfm": "VBS", "lrecl": 32760, "records": 300,
                               "untersed_size": len(plain)}
    g = read_bytes(gzip.compress(raw), "s.trs.gz")
    assert g.framing == f"terse {mode} + RDW+gzip"
    assert g.samples.drop(columns=["source"]).equals(a.samples.drop(columns=["source"]))


def test_tersed_text_says_what_it_holds():
    res = read_bytes((DATA / "TERSED" / "FB.XARGS.SPACK").read_bytes(), "x.trs")
    assert res.kind == "unknown" or len(res.samples) == 0
    assert res.framing == "terse SPACK"
    f = [f for f in res.findings if f.code == "tersed-not-smf"]
    # xargs.1 as FB LRECL=80: 8,960 bytes = 112 records
    assert len(f) == 1 and "RECFM=FB, LRECL=80, 112 records" in f[0].message
    assert not any(f.code == "unknown-framing" for f in res.findings)


def test_fixed_records_round_trip():
    recs = [bytes([i % 7 + 0xC1]) * 40 + bytes(range(i % 50, i % 50 + 40)) for i in range(300)]
    out, info = _unterse(tersed(recs, "PACK", variable=False, lrecl=80))
    assert bytes(out) == b"".join(recs) and info.records == 300


# ----------------------------------------------------------------------------- detection

def test_bundled_samples_are_not_taken_for_tersed():
    for p in SAMPLES.glob("*.gz"):
        assert not terse.looks_tersed(gzip.decompress(p.read_bytes())[:1 << 16]), p.name


def test_header_checks():
    good = header("PACK", True, 32756, spanned=True)
    assert terse.parse_header(good + b"\0\0") is not None
    assert terse.parse_header(b"\x03" + good[1:] + b"\0\0") is None       # version 3 is not PACK or SPACK
    assert terse.parse_header(good[:1] + b"\x02" + good[2:] + b"\0\0") is None     # record format 2
    assert terse.parse_header(good[:2] + b"\0\0" + good[4:] + b"\0\0") is None     # no record length at all
    assert terse.parse_header(good[:2] + b"\x7f\xff" + good[4:] + b"\0\0") is None  # 32,767 > LRECL 32,760
    assert terse.parse_header(good[:8] + (100).to_bytes(4, "big") + b"\0\0") is None  # two lengths disagree
    assert terse.parse_header(good[:4] + b"\x00\x00\x6d\x5e" + good[8:] + b"\0\0") is None  # non-MVS, block size


def test_an_rdw_chain_that_mimics_a_header_is_smf():
    # an RDW of length 512 (X'0200 0000'), flag X'5E' (has X'04'), bytes 8-11 = 100: a valid-looking header with
    # record length 100 in its second field; the next RDW at offset 512 shows it is an RDW chain
    rec = b"\x02\x00\x00\x00\x5e\x71" + bytes(2) + (100).to_bytes(4, "big") + bytes(500)
    data = rec + b"\x01\x00\x00\x00" + bytes(252)
    assert terse.parse_header(data) is not None
    assert not terse.looks_tersed(data)


# ----------------------------------------------------------------------------- damage

SMALL = [(DATA / "TERSED" / n).read_bytes() for n in ("VB.XARGS.PACK", "VB.XARGS.SPACK", "FB.GRAMMAR.LSP.SPACK")]
SMALL_END = [terse.unterse(raw, "x")[1].consumed for raw in SMALL]     # where the end marker ends
DEEP = [(DATA / "TERSED" / n).read_bytes() for n in ("VB.CP.HTML.PACK", "VB.CP.HTML.SPACK")]


def test_cut_keeps_whole_records_and_says_where():
    raw = (DATA / "TERSED" / "VB.CP.HTML.SPACK").read_bytes()
    full, _ = terse.unterse(raw, "x")
    out, info = terse.unterse(raw[:5000], "x")
    assert info.records > 0 and full.startswith(out)
    assert rdw_records(bytes(out)) == rdw_records(bytes(full))[:info.records]     # whole records only
    (f,) = info.findings
    assert f.code == "terse-cut" and f.offset == 5000
    assert f"up to output record {info.records}" in f.message


@pytest.mark.parametrize("path", PATHS)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(which=st.integers(0, len(SMALL) - 1), frac=st.floats(0.0, 1.0), xor=st.integers(1, 255))
def test_damage_keeps_everything_before_it(path, which, frac, xor):
    raw = SMALL[which]
    k = 12 + int(frac * (SMALL_END[which] - 15))      # a byte before the end marker
    cut, cinfo = _unterse(raw[:k], path)
    flipped = bytearray(raw)
    flipped[k] ^= xor
    out, info = _unterse(bytes(flipped), path)
    # the records completed before byte k are decoded from the same codes either way
    assert bytes(out).startswith(bytes(cut))
    assert [f.code for f in cinfo.findings] == ["terse-cut"] and cinfo.findings[0].offset == k
    assert all(f.offset is not None for f in info.findings)


@needs_kernel
@settings(max_examples=60, deadline=None)
@given(mode=st.sampled_from(["PACK", "SPACK"]), variable=st.booleans(), body=st.binary(min_size=0, max_size=600))
def test_both_paths_agree_on_any_bytes(mode, variable, body):
    raw = header(mode, variable, 120) + body
    a, ai = terse.unterse(raw, "x")
    with kernel.pure():
        b, bi = terse.unterse(raw, "x")
    assert bytes(a) == bytes(b) and ai.records == bi.records
    assert [(f.code, f.offset, f.message) for f in ai.findings] == [(f.code, f.offset, f.message) for f in bi.findings]


@needs_kernel
@settings(max_examples=40, deadline=None)
@given(which=st.integers(0, len(DEEP) - 1), frac=st.floats(0.0, 1.0), xor=st.integers(1, 255),
       more=st.lists(st.tuples(st.floats(0.0, 1.0), st.integers(0, 255)), max_size=3))
def test_both_paths_agree_on_damaged_real_data(which, frac, xor, more):
    # damage anywhere in real AMATERSE streams long enough (over 3,838 codes) to fill and recycle the dictionary
    raw = bytearray(DEEP[which])
    for f, x in [(frac, xor), *more]:
        raw[12 + int(f * (len(raw) - 13))] ^= x
    a, ai = terse.unterse(bytes(raw), "x")
    with kernel.pure():
        b, bi = terse.unterse(bytes(raw), "x")
    assert bytes(a) == bytes(b) and ai.records == bi.records
    assert [(f.code, f.offset, f.message) for f in ai.findings] == [(f.code, f.offset, f.message) for f in bi.findings]


def test_undefined_spack_code_is_damage():
    # SPACK: the first code can only be a byte or a record mark; 300 names a pair that does not exist yet
    raw = header("SPACK", True, 100) + pack_codes([0xC2, 257, 300, 0xC3, 0])
    out, info = terse.unterse(raw, "x")
    assert bytes(out) == b"\x00\x05\x00\x00\xc1"       # one record: RDW (5 bytes) + X'C1'
    (f,) = info.findings
    assert f.code == "terse-damaged" and f.offset == 15    # code 2 starts at 12 + 3 = 15
    assert "output record 1" in f.message


def test_record_longer_than_the_header_allows_is_damage():
    raw = header("SPACK", True, 4) + pack_codes([0xC2] * 4 + [257] + [0xC3] * 9 + [257, 0])
    out, info = terse.unterse(raw, "x")
    assert bytes(out) == b"\x00\x08\x00\x00" + b"\xc1" * 4
    assert [f.code for f in info.findings] == ["terse-damaged"] and "longest the header allows" in \
        info.findings[0].message


# ----------------------------------------------------------------------------- bombs and cancel

def _fibonacci_bomb() -> bytes:
    # SPACK pairs (previous code, this code): 'a','a' makes 258 = aa; sending 258, 259, ... makes each new pair
    # the last two joined, so the expansion of code 258+i grows like Fibonacci: 60 codes, ~10^12 bytes
    return header("SPACK", False, 1) + pack_codes([0x82, 0x82, *range(258, 318), 0])


@pytest.mark.parametrize("path", PATHS)
def test_bomb_stops_at_the_cap(path):
    cap = 1 << 20
    out, info = _unterse(_fibonacci_bomb(), path, cap=cap)
    assert len(out) == cap and info.stop and "NESTSCOPE_MAX_BYTES" in info.stop
    assert bytes(out) == b"\x81" * cap


@needs_kernel
def test_bomb_stops_at_the_ratio():
    out, info = terse.unterse(_fibonacci_bomb(), "x", ratio=1000, floor=4 << 20)
    assert info.stop and "NESTSCOPE_MAX_RATIO" in info.stop
    assert 4 << 20 < len(out) <= (4 << 20) + (1 << 23)      # stopped within a chunk of passing the floor


def test_bomb_in_read_bytes_is_a_finding(monkeypatch):
    monkeypatch.setenv("NESTSCOPE_MAX_BYTES", "2M")
    res = read_bytes(_fibonacci_bomb(), "bomb.trs")
    assert res.kind == "unknown" and res.framing == "terse"
    assert [f.code for f in res.findings] == ["too-large"]


def test_cancel():
    raw = tersed([b"\xc1" * 200] * 2000, "SPACK", variable=True, lrecl=200)
    with pytest.raises(Cancelled):
        terse.unterse(raw, "x", cancel=lambda: True)


def test_chunked_output_is_the_same(smf):
    # a small output chunk forces many calls, records carried over between them
    recs, plain = smf
    raw = tersed(recs, "PACK", variable=True, lrecl=32756, spanned=True)
    chunks = []
    kept, info = terse.unterse(raw, "x", write=lambda m: chunks.append(bytes(m)), chunk=1 << 16)
    assert kept == bytearray()                        # streamed: nothing is kept in memory
    assert b"".join(chunks) == plain and len(chunks) >= 4       # ~150 KB a call for 500 KB of output
    assert all(rdw_records(c) and _rdw(rdw_records(c)) == c for c in chunks)      # whole records per chunk


def test_state_layout_matches_the_compiled_loop():
    # the C file hard-codes the same layout: HEAD + 4 tables of TREE + the stack
    assert T.SIZE == 16 + 4 * 4097 + 4200
    src = (ROOT / "app" / "formats" / "_terse.c").read_text()
    assert "#define TREE 4097" in src and "#define STACK_MAX 4200" in src and "#define HEAD 16" in src


# ----------------------------------------------------------------------------- the reader on damaged tersed SMF

_RECS = rdw_records(gzip.decompress((SAMPLES / "after_z16_ZOSA_smf113.rdw.gz").read_bytes()))[:40]
_TRS = tersed(_RECS, "PACK", variable=True, lrecl=32756, spanned=True)
_END = terse.unterse(_TRS, "x")[1].consumed
_PLAIN = read_bytes(_rdw(_RECS), "p.rdw").samples


@settings(max_examples=30, deadline=None)
@given(frac=st.floats(0.0, 1.0), xor=st.integers(0, 255))
def test_reader_keeps_the_records_before_the_damage(frac, xor):
    # cut the tersed SMF file at k (and flip byte k-1 when xor > 0): never an exception; the samples read are
    # those of the first N records, N the records the unterse recovered
    k = 13 + int(frac * (_END - 14))
    raw = bytearray(_TRS[:k])
    raw[-1] ^= xor
    res = read_bytes(bytes(raw), "cut.trs")
    assert any(f.code.startswith("terse-") or f.code in ("bad-terse",) for f in res.findings)
    if res.kind == "smf" and xor == 0:
        n = res.meta["terse"]["records"]
        assert len(res.samples) == n
        assert res.samples["B0"].tolist() == _PLAIN["B0"].iloc[:n].tolist()


def test_an_end_marker_inside_a_short_last_block_is_a_cut():
    # found by hypothesis: the file cut at 3,725 bytes with its last byte flipped (XOR 16) turns the last 12-bit
    # code into 0, the end marker; the stream looks complete, but AMATERSE writes whole 1,024-byte records and
    # 3,725 = 3 * 1,024 + 653, so the file was cut: a warning at the file size, every whole record kept
    k = 13 + int(0.2797903972499725 * (_END - 14))
    raw = bytearray(_TRS[:k])
    raw[-1] ^= 16
    _, info = terse.unterse(bytes(raw), "cut.trs")
    assert [(f.code, f.offset) for f in info.findings] == [("terse-short-block", k)]
    res = read_bytes(bytes(raw), "cut.trs")
    assert "terse-short-block" in {f.code for f in res.findings}
    # the same stream in whole blocks (the real file) has no finding
    assert terse.unterse(_TRS, "x")[1].findings == []


def test_progress_covers_the_unterse_then_the_reader(smf):
    recs, plain = smf
    raw = tersed(recs, "PACK", variable=True, lrecl=32756, spanned=True)
    seen: list[float] = []
    _, info = terse.unterse(raw, "x", progress=seen.append, chunk=1 << 16)
    assert len(seen) >= 4 and seen == sorted(seen) and seen[-1] == pytest.approx(info.consumed / len(raw))
    seen.clear()
    read_bytes(raw, "x.trs", progress=seen.append)
    share = terse.PROGRESS_SHARE
    assert seen == sorted(seen) and seen[-1] == 1.0
    assert any(0 < f <= share for f in seen) and any(f > share for f in seen)


@settings(max_examples=40, deadline=None)
@given(recs=st.lists(st.binary(min_size=0, max_size=300).map(lambda b: bytes(x % 3 + 0x40 for x in b)),
                     min_size=1, max_size=40),
       mode=st.sampled_from(["PACK", "SPACK"]))
def test_any_variable_records_round_trip(recs, mode):
    # the records of any VB data set (empty ones too: an RDW of length 4) come back with their RDWs
    out, info = terse.unterse(tersed(recs, mode, variable=True, lrecl=300), "x")
    assert bytes(out) == _rdw(recs) and info.records == len(recs) and info.findings == []


@pytest.mark.parametrize("path", PATHS)
def test_last_variable_record_without_its_mark_is_kept(path):
    # literal SPACK codes: X'C1' X'C2', record mark, X'C3', end marker (no mark: the record still counts)
    # (zero-padded to its 1,024-byte record, as AMATERSE writes it)
    raw = header("SPACK", True, 100) + pack_codes([0xC2, 0xC3, 257, 0xC4, 0])
    out, info = _unterse(raw + bytes(1024 - len(raw)), path)
    assert bytes(out) == b"\x00\x06\x00\x00\xc1\xc2" + b"\x00\x05\x00\x00\xc3"
    assert info.records == 2 and info.findings == []
    # the same bytes without the padding: the same records, and a warning that the file ends inside its block
    out, info = _unterse(raw, path)
    assert bytes(out) == b"\x00\x06\x00\x00\xc1\xc2" + b"\x00\x05\x00\x00\xc3"
    assert [(f.code, f.offset) for f in info.findings] == [("terse-short-block", len(raw))]


def test_a_loop_without_progress_ends_as_damage(monkeypatch):
    # guard against a hang: a loop call that neither reads a code nor writes a byte stops the stream
    monkeypatch.setattr(T, "step", lambda st, raw, buf, olen: olen)
    with kernel.pure():
        out, info = terse.unterse(SMALL[0], "x")
    assert out == bytearray() and [f.code for f in info.findings] == ["terse-damaged"]


def test_misuse_is_refused():
    with pytest.raises(ValueError):
        terse.unterse(b"\x00" * 64, "x")                       # not a tersed data set: callers check first
    if terse.compiled():
        import numpy as np

        with pytest.raises(ValueError):                          # a state vector of the wrong size
            terse._ct.step(np.zeros(10, np.int64), SMALL[0], bytearray(1 << 16), 0)
        with pytest.raises(ValueError):                          # an output length past the buffer
            terse._ct.step(T.new_state(T.PACK, True, 100), SMALL[0], bytearray(16), 17)
