"""The SMF reader's page handling and one-pass decode (issue 23): the framing walk maps each step's pages in one
call and hands them back once its records' first bytes are copied (``kernel.rdw_heads``); a shape's fields and
counter sets are gathered in one pass over blocks of rows, on two threads for many rows, each block's pages
handed back once copied (``kernel.gather_blocks``); a file of one record shape is decoded in that pass, which
also checks that every record is of the shape (``smf113._one_shape``).  None of it may change a result: the
values must be those of ``kernel.gather_fields``, ``kernel.rdw_offsets`` + ``kernel.rows_at`` and the shape
loop, whatever the rows, the blocks and the threads."""

from __future__ import annotations

import gzip
import mmap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.formats import kernel, pages, read_bytes, read_file, smf113
from app.formats import smf113_layout as L
from app.formats.smf_resync import MIN_LEN

ROOT = Path(__file__).resolve().parents[2]
SMF = sorted((ROOT / "resources" / "samples").glob("*smf113*"))

compiled = pytest.mark.skipif(not kernel.available(), reason="the compiled kernel is not built here: "
                              "gather_blocks and the one-pass decode are not used")


@pytest.fixture
def small_blocks(monkeypatch):
    """Blocks of 7 rows, two threads from 20 rows: every path of gather_blocks on small inputs."""
    monkeypatch.setattr(kernel, "BLOCK_ROWS", 7)
    monkeypatch.setattr(kernel, "THREAD_ROWS", 20)
    monkeypatch.setenv("NESTSCOPE_THREADS", "2")


def _mapped(tmp_path: Path, data: bytes) -> mmap.mmap:
    p = tmp_path / "m.bin"
    p.write_bytes(data)
    with open(p, "rb") as fh:
        return mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)


fields_st = st.lists(st.tuples(st.integers(0, 40), st.integers(1, 8)), min_size=1, max_size=12)


@compiled
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.integers(1, 80), pad=st.integers(0, 9), jobs=st.lists(fields_st, min_size=1, max_size=4),
       threads=st.sampled_from(["1", "2"]), seed=st.integers(0, 2**32 - 1), by_column=st.booleans())
def test_gather_blocks_is_gather_fields_job_by_job(rows, pad, jobs, threads, seed, by_column, monkeypatch):
    # rows of 48 bytes at a stride of 48 + pad (a view into a bigger buffer, as the records of a file are)
    monkeypatch.setattr(kernel, "BLOCK_ROWS", 7)
    monkeypatch.setattr(kernel, "THREAD_ROWS", 20)
    monkeypatch.setenv("NESTSCOPE_THREADS", threads)
    rng = np.random.default_rng(seed)
    buf = rng.integers(0, 256, rows * (48 + pad) + 5, dtype=np.uint8)
    mat = np.lib.stride_tricks.as_strided(buf[5:], shape=(rows, 48), strides=(48 + pad, 1), writeable=False)
    jobs = [[(o, w) for o, w in f if o + w <= 48] or [(0, 1)] for f in jobs]
    got = kernel.gather_blocks(mat, jobs, by_column=by_column)
    assert got is not None and len(got) == len(jobs)
    for fields, g in zip(jobs, got):
        want = kernel.gather_fields(mat, fields)
        assert g.dtype == np.uint64 and g.shape == (rows, len(fields))
        # by_column: each field's values adjacent (the transpose C-contiguous), else the rows as gather_fields
        assert (g.T.flags.c_contiguous if by_column else g.flags.c_contiguous)
        assert np.array_equal(g, want)
        if all(w in (1, 2, 4, 8) for _o, w in fields):
            with kernel.pure():                  # and numpy's own big-endian reading (widths numpy has)
                assert np.array_equal(g, kernel.gather_fields(mat, fields))


@compiled
def test_gather_blocks_off_the_compiled_path_does_nothing():
    mat = np.zeros((4, 16), np.uint8)
    assert kernel.gather_blocks(mat, [[(10, 8)]]) is None          # a field past the end of the row
    assert kernel.gather_blocks(mat, [[(0, 9)]]) is None           # wider than 8 bytes
    assert kernel.gather_blocks(mat, [[(0, 2)]], same=[(15, 2)]) is None   # a shared span past the row
    with kernel.pure():
        assert kernel.gather_blocks(mat, [[(0, 2)]]) is None


@compiled
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.integers(2, 60), at=st.integers(0, 59), col=st.integers(0, 15), seed=st.integers(0, 2**32 - 1))
def test_gather_blocks_raises_differ_exactly_when_a_row_leaves_the_shared_spans(rows, at, col, seed, small_blocks):
    rng = np.random.default_rng(seed)
    mat = rng.integers(0, 256, (rows, 32), dtype=np.uint8)
    mat[:, 0:16] = mat[0, 0:16]                  # every row shares bytes 0..15 with row 0
    spans = [(0, 4), (4, 12)]
    assert kernel.gather_blocks(mat, [[(16, 8)]], same=spans) is not None
    at = at % rows
    mat[at, col] ^= 0x5A                         # one byte of one row changed (row 0: all others differ)
    with pytest.raises(kernel.Differ):
        kernel.gather_blocks(mat, [[(16, 8)]], same=spans)
    # outside the shared spans nothing is checked
    assert kernel.gather_blocks(mat, [[(16, 8)]], same=[(o, w) for o, w in spans if not o <= col < o + w]
                                ) is not None


@compiled
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=st.integers(1, 70), seed=st.integers(0, 2**32 - 1))
def test_gather_blocks_on_a_mapped_file_gives_the_same_values(rows, seed, small_blocks, tmp_path_factory):
    # the pages of each block mapped before and handed back after: the values cannot change
    rng = np.random.default_rng(seed)
    data = rng.integers(0, 256, 100 + rows * 1530, dtype=np.uint8).tobytes()
    m = _mapped(tmp_path_factory.mktemp("g"), data)
    try:
        u8 = np.frombuffer(m, np.uint8)
        mat = np.lib.stride_tricks.as_strided(u8[100:], shape=(rows, 1530), strides=(1530, 1), writeable=False)
        jobs = [[(k * 8, 8) for k in range(190)], [(3, 2), (1500, 4), (7, 1)]]
        got = kernel.gather_blocks(mat, jobs, buf=m, base=100)
        ref = np.frombuffer(data, np.uint8)[100:].reshape(rows, 1530)
        for fields, g in zip(jobs, got):
            assert np.array_equal(g, kernel.gather_fields(ref, fields))
        assert bytes(m[:]) == data               # the map still reads the file's bytes after its pages went back
        del u8, mat
    finally:
        m.close()


def _chain(lengths: list[int], seed: int) -> bytes:
    rng = np.random.default_rng(seed)
    out = []
    for n in lengths:
        body = rng.integers(0, 256, n - 4, dtype=np.uint8).tobytes()
        out.append(n.to_bytes(2, "big") + b"\0\0" + body)
    return b"".join(out)


@settings(max_examples=60, deadline=None)
@given(lengths=st.lists(st.integers(MIN_LEN, 3000), min_size=0, max_size=40), step=st.integers(1, 20000),
       tail=st.binary(max_size=30), seed=st.integers(0, 2**32 - 1))
def test_rdw_heads_is_rdw_offsets_and_rows_at(lengths, step, tail, seed, tmp_path_factory):
    data = _chain(lengths, seed) + tail
    if not data:
        data = b"\0"
    m = _mapped(tmp_path_factory.mktemp("w"), data)
    try:
        for buf in (data, m):
            pos = 0
            while True:
                offs, heads, end, status = kernel.rdw_heads(buf, pos, pos + step, MIN_LEN, 56)
                want, wend, wstatus = kernel.rdw_offsets(data, pos, pos + step, MIN_LEN)
                assert np.array_equal(offs, want) and (end, status) == (wend, wstatus)
                assert np.array_equal(heads, kernel.rows_at(data, want, 56))
                if status != 1 or end >= len(data):
                    break
                pos = end
    finally:
        m.close()


def test_populate_and_drop_are_harmless_hints(tmp_path):
    data = bytes(range(256)) * 64
    m = _mapped(tmp_path, data)
    try:
        for a, b in ((0, len(data)), (5000, 9000), (-10, 10), (9000, 5000), (0, 10 * len(data))):
            pages.populate(m, a, b)
            pages.drop(m, a, b)
            assert bytes(m[:]) == data
        pages.populate(data, 0, len(data))       # bytes: nothing to do
        pages.drop(data, 0, len(data))
    finally:
        m.close()
    pages.drop(m, 0, 10)                         # a closed map: nothing, no error
    pages.populate(m, 0, 10)


def test_threads_follow_the_environment(monkeypatch):
    monkeypatch.setenv("NESTSCOPE_THREADS", "1")
    assert pages.threads() == 1
    monkeypatch.setenv("NESTSCOPE_THREADS", "x")
    assert pages.threads() == 1
    monkeypatch.setenv("NESTSCOPE_THREADS", "3")
    assert pages.threads() == 3


# --- whole reads: the one-pass decode against the shape loop -------------------------------------------------

def _same(a, b) -> None:
    pd.testing.assert_frame_equal(a.samples, b.samples, check_exact=True)
    assert [(f.severity, f.code, f.offset, f.message) for f in a.findings] == \
        [(f.severity, f.code, f.offset, f.message) for f in b.findings]
    assert (a.records, a.framing, a.meta) == (b.records, b.framing, b.meta)


def _loop_only(monkeypatch):
    monkeypatch.setattr(smf113, "_one_shape", lambda *a, **k: False)


def _bumped(raw: bytes, every: int) -> bytes:
    """The RDW-framed records of ``raw`` with a layout field of every ``every``-th SMF 113 subtype 1 record
    changed: another record shape among the others (the one-pass decode must give way to the shape loop)."""
    out, p = bytearray(raw), 0
    k = 0
    while p + 4 <= len(out):
        n = int.from_bytes(out[p:p + 2], "big")
        if n < 4:
            break
        if out[p + 5] == 113 and int.from_bytes(out[p + 22:p + 24], "big") == 1:     # the RDW is byte 0
            if k % every == every - 1:
                out[p + int.from_bytes(out[p + 44:p + 48], "big") + L.S1_CSVN + 1] ^= 0x01     # its CSVN
            k += 1
        p += n
    return bytes(out)


@compiled
@pytest.mark.parametrize("path", SMF, ids=lambda p: p.name)
def test_sample_files_one_pass_and_shape_loop_agree(path, monkeypatch, small_blocks, tmp_path):
    raw = gzip.decompress(path.read_bytes())
    f = tmp_path / "s.smf"
    f.write_bytes(raw)
    fast = read_file(f)                          # mapped: pages handed back block by block
    assert len(fast.samples) > 1000
    _loop_only(monkeypatch)
    slow = read_file(f)
    _same(fast, slow)
    _same(read_bytes(raw, str(f)), slow)         # bytes, not a map


@compiled
@pytest.mark.parametrize("every", [2, 50, 997])
def test_another_shape_among_the_records_gives_the_shape_loops_result(every, monkeypatch, small_blocks, tmp_path):
    raw = gzip.decompress((ROOT / "resources" / "samples" / "before_z15_ZOSA_smf113.rdw.gz").read_bytes())
    bumped = _bumped(raw, every)
    assert bumped != raw
    f = tmp_path / "b.smf"
    f.write_bytes(bumped)
    calls = []
    real = smf113._one_shape

    def spy(*a, **k):
        calls.append(real(*a, **k))
        return calls[-1]
    monkeypatch.setattr(smf113, "_one_shape", spy)
    fast = read_file(f)
    assert calls and not any(calls)              # the other shape was noticed: the shape loop decoded the file
    assert fast.samples["csvn"].nunique() == 2   # both versions read
    _loop_only(monkeypatch)
    _same(fast, read_file(f))


def _local_time_row_by_row(tme, dte) -> np.ndarray:
    """The SMF header's local time decoded row by row with datetime (spec 3: TME hundredths of a second since
    midnight, DTE packed 0cyydddF with sign nibble C or F): what the vectorized decode must give."""
    import datetime as dt

    out = []
    for t, d in zip(tme.tolist(), dte.tolist()):
        h = f"{d:08X}"
        ok = h[0] == "0" and h[-1] in "CF" and h[1:7].isdigit() and int(h[1]) <= 2 and t < 8_640_000
        if ok:
            year, ddd = 1900 + int(h[1:4][0]) * 100 + int(h[2:4]), int(h[4:7])
            ok = 1 <= ddd <= (366 if (year % 4 == 0 and year % 100 != 0) or year % 400 == 0 else 365)
        out.append(np.datetime64(dt.datetime(year, 1, 1) + dt.timedelta(days=ddd - 1, milliseconds=10 * t), "ns")
                   if ok else np.datetime64("NaT", "ns"))
    return np.array(out, "datetime64[ns]")


packed = st.builds(lambda c, yy, ddd, sign: int(f"0{c}{yy:02d}{ddd:03d}{sign}", 16), st.integers(0, 2),
                   st.integers(0, 99), st.integers(0, 367), st.sampled_from("CFDA"))


@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 8_700_000), packed | st.integers(0, 2**32 - 1)), min_size=1, max_size=60))
def test_local_time_decodes_each_date_as_row_by_row(rows):
    from app.formats import common

    tme = np.array([t for t, _ in rows], np.uint64)
    dte = np.array([d for _, d in rows], np.uint64)
    got = common.smf_local_datetime64(tme, dte)
    assert got.dtype == np.dtype("datetime64[ns]")
    assert np.array_equal(got, _local_time_row_by_row(tme, dte), equal_nan=True)


@compiled
@pytest.mark.parametrize("path", SMF, ids=lambda p: p.name)
def test_a_decoded_frames_counters_each_one_contiguous_array(path):
    """Every counter of a frame decoded ``by_column`` (the extract's read) is one contiguous array (its values
    adjacent: the frame's blocks in column order, as pandas lays a block out), which Arrow takes as it is
    (app/dataset/tables.py), held in blocks of at most ``smf113.COUNTER_GROUP`` counters (an extract's copy
    after the carried samples lets go of one block at a time), the values those of the pure reader."""
    got = read_bytes(path.read_bytes(), path.name, by_column=True).samples
    counters = [c for c in got.columns if c[0] in "BPKEM" and c[1:].isdigit()]
    assert counters
    for c in counters:
        a = got[c].to_numpy()
        assert a.dtype == np.uint64 and a.flags.c_contiguous, c
    # counters sharing memory: a block's; at most COUNTER_GROUP of them
    groups: list[list[np.ndarray]] = []
    for a in (got[c].to_numpy() for c in counters):
        g = next((g for g in groups if np.shares_memory(g[0].base if g[0].base is not None else g[0],
                                                        a.base if a.base is not None else a)), None)
        if g is None:
            groups.append([a])
        else:
            g.append(a)
    assert max(map(len, groups)) <= smf113.COUNTER_GROUP
    with kernel.pure():
        want = read_bytes(path.read_bytes(), path.name).samples
    pd.testing.assert_frame_equal(got, want)


# --- records of a shape scattered among others (a file of subtype 1 and 2 records, issue 24) --------------------

@compiled
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(gaps=st.lists(st.integers(0, 70), min_size=1, max_size=60), jobs=st.lists(fields_st, min_size=1, max_size=3),
       threads=st.sampled_from(["1", "2"]), seed=st.integers(0, 2**32 - 1), by_column=st.booleans())
def test_gather_blocks_over_scattered_rows_is_gather_fields_of_their_copy(gaps, jobs, threads, seed, by_column,
                                                                          monkeypatch):
    # rows of 48 bytes at ascending offsets with gaps of 0-70 bytes between them (other records' bytes)
    monkeypatch.setattr(kernel, "BLOCK_ROWS", 7)
    monkeypatch.setattr(kernel, "THREAD_ROWS", 20)
    monkeypatch.setenv("NESTSCOPE_THREADS", threads)
    starts = np.cumsum([g + 48 for g in gaps]) - 48
    buf = np.random.default_rng(seed).integers(0, 256, int(starts[-1]) + 48 + 3, dtype=np.uint8).tobytes()
    rows = kernel.ScatteredRows(buf, starts, 48)
    dense = np.stack([np.frombuffer(buf, np.uint8)[s:s + 48] for s in starts.tolist()])    # the copy, row by row
    assert np.array_equal(rows.dense(), dense) and rows.shape == dense.shape
    assert bytes(rows[len(starts) - 1, 3:9]) == bytes(dense[-1, 3:9])
    jobs = [[(o, w) for o, w in f if o + w <= 48] or [(0, 1)] for f in jobs]
    got = kernel.gather_blocks(rows, jobs, by_column=by_column)
    assert got is not None
    for fields, g in zip(jobs, got):
        assert np.array_equal(g, kernel.gather_fields(dense, fields))
        assert (g.T.flags.c_contiguous if by_column else g.flags.c_contiguous)


def _copied(monkeypatch):
    monkeypatch.setattr(smf113, "SCATTER", False)


@compiled
@pytest.mark.parametrize("name,every", [("after_z16_ZOSA_smf113.rdw.gz", 0), ("before_z15_ZOSA_smf113.rdw.gz", 3)])
def test_shapes_read_where_they_are_give_the_copied_shapes_result(name, every, monkeypatch, small_blocks, tmp_path):
    # the z16 ZOSA file holds subtype 1 and 2 records interleaved (two shapes, one of them not at one stride);
    # in the z15 one every third record is bumped to another shape (two shapes, neither at one stride)
    raw = gzip.decompress((ROOT / "resources" / "samples" / name).read_bytes())
    raw = _bumped(raw, every) if every else raw
    mm = _mapped(tmp_path, raw)                   # mapped: each block's pages mapped, then handed back
    scattered = []
    real = kernel.ScatteredRows

    class Spy(real):
        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            scattered.append(self)
    monkeypatch.setattr(kernel, "ScatteredRows", Spy)
    fast = read_bytes(mm, name, by_column=True)          # the extract's read
    assert scattered and len(fast.samples) > 1000
    del scattered[:]
    window = read_bytes(mm, name)                        # the window's keeps the copy (less CPU)
    assert not scattered
    monkeypatch.setattr(kernel, "ScatteredRows", real)
    _copied(monkeypatch)
    _same(fast, read_bytes(mm, name, by_column=True))
    _same(fast, read_bytes(raw, name, by_column=True))
    pd.testing.assert_frame_equal(window.samples, fast.samples, check_exact=True)     # the same values either way
    mm.close()


def test_drop_past_reaches_into_the_map_after_a_window(tmp_path):
    # a window of a map handed back with ``past``: the map's pages up to AROUND bytes after the window's end too
    # (a large folio straddling it is mapped whole), never past the map's end; without it, the window's own pages
    P = pages
    f = tmp_path / "w.bin"
    f.write_bytes(bytes(8 << 20))
    with open(f, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        mv = memoryview(mm)
        win = mv[5000:5000 + (1 << 20)]
        page = mmap.PAGESIZE
        assert P._span(win, 0, len(win))[1:] == (4096, 5000 + (1 << 20) - 4096)    # from its first page
        assert P._span(win, 0, len(win), 0, P.AROUND)[1:] == (4096, 5000 + (1 << 20) + P.AROUND - 4096)
        tail = mv[(8 << 20) - 3 * page:]
        assert P._span(tail, 0, len(tail), 0, P.AROUND)[1:] == ((8 << 20) - 3 * page, 3 * page)   # the map's end
        P.drop(win, 0, len(win), past=True)                  # (the call itself: no error on a window)
        win.release()
        tail.release()
        mv.release()
