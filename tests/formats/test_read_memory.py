"""The SMF reader's temporaries (issue 24: an extract's peak within 1.5x the largest decoded chunk).

* ``kernel.gather_blocks`` maps at most :data:`kernel.BLOCK_BYTES` of records at a time (each block's pages
  handed back before the next block's are mapped), whatever the record length, with the values of
  ``kernel.gather_fields``.
* A shape's identity fields (gathered as uint64, about a quarter of the frame's bytes) are let go before its
  counters are gathered: the two gathers are never held together.
* ``memory.reset_peak`` starts the process's peak resident size again (what the benchmark's reader-alone figure
  is measured from after its warm-up).
"""

from __future__ import annotations

import gc
import gzip
import mmap
import os
import resource
import sys
import weakref
from pathlib import Path

import numpy as np
import pytest

from app import memory
from app.formats import kernel, pages, read_bytes, read_file, smf113

ROOT = Path(__file__).resolve().parents[2]

compiled = pytest.mark.skipif(not kernel.available(), reason="the compiled kernel is not built here: "
                              "gather_blocks is not used")


@compiled
@pytest.mark.parametrize("extract", [False, True], ids=["window", "extract"])
@pytest.mark.parametrize("length,block,rows", [(1530, 4 * 1530, 10), (1530, 4 * 1530 + 1529, 9),
                                               (200, 1000, 23), (1530, 100, 3)])
def test_gather_blocks_maps_a_block_of_bytes_at_a_time(length, block, rows, extract, monkeypatch, tmp_path):
    # the window's blocks of kernel.BLOCK_BYTES, the extract's of the ``block`` it asks for
    monkeypatch.setattr(kernel, "BLOCK_BYTES", 1 << 30 if extract else block)
    monkeypatch.setenv("NESTSCOPE_THREADS", "1")
    data = np.random.default_rng(7).integers(0, 256, 64 + rows * length, dtype=np.uint8).tobytes()
    p = tmp_path / "m.bin"
    p.write_bytes(data)
    mapped, dropped, past = [], [], []
    real_pop, real_drop = pages.populate, pages.drop
    monkeypatch.setattr(pages, "populate", lambda b, s, e: (mapped.append((s, e)), real_pop(b, s, e))[1])
    monkeypatch.setattr(pages, "drop", lambda b, s, e, past_=False: (dropped.append((s, e)), past.append(past_),
                                                                      real_drop(b, s, e, past_))[2])
    with open(p, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as m:
        u8 = np.frombuffer(m, np.uint8)
        mat = np.lib.stride_tricks.as_strided(u8[64:], shape=(rows, length), strides=(length, 1), writeable=False)
        jobs = [[(0, 2), (length - 8, 8)], [(k * 8, 8) for k in range(length // 8)]]
        got = kernel.gather_blocks(mat, jobs, buf=m, base=64, block=block if extract else None)
        ref = np.frombuffer(data, np.uint8)[64:].reshape(rows, length)
        for fields, g in zip(jobs, got):
            assert np.array_equal(g, kernel.gather_fields(ref, fields))
        del u8, mat
    per = max(1, block // length)                 # whole records per block: 4, 4, 5, and 1 (a record > a block)
    assert len(mapped) == -(-rows // per)
    assert mapped == dropped                      # each block's pages handed back (before the next is mapped)
    # the extract's last block's with those of the map after it (a large folio straddling its end is mapped whole)
    assert past == [False] * (len(mapped) - 1) + [extract]
    assert [s for s, _e in mapped] == [64 + a * length for a in range(0, rows, per)]
    assert all(e - s <= max(block, length) for s, e in mapped)


@compiled
@pytest.mark.parametrize("by_column", [False, True], ids=["rows", "by_column"])
def test_identity_gather_let_go_before_the_counters_are_gathered(monkeypatch, tmp_path, by_column):
    raw = gzip.decompress((ROOT / "resources" / "samples" / "after_z16_ZOSA_smf113.rdw.gz").read_bytes())
    f = tmp_path / "a.smf"
    f.write_bytes(raw)
    calls: list[tuple[int, list, bool]] = []
    real = kernel.gather_blocks

    def spy(mat, jobs, **kw):
        if sys._getframe(1).f_code.co_name == "_split":      # (a shape's layout fields, to group its records)
            return real(mat, jobs, **kw)
        gc.collect()
        alive = bool(calls) and any(r() is not None for r in calls[-1][1])    # the previous call's output
        out = real(mat, jobs, **kw)
        calls.append((len(jobs), [weakref.ref(o) for o in out or []], alive))
        return out
    monkeypatch.setattr(kernel, "gather_blocks", spy)
    # the default read (the window's, the CLI's); by_column: the extract's (app/dataset/store.py)
    r = read_bytes(raw, str(f), by_column=True) if by_column else read_file(f)
    assert len(r.samples) == 4620
    # two shapes; each: its identity fields (one job), then its four counter sets: one job each (row order), or
    # (by_column) in jobs of at most smf113.COUNTER_GROUP (8) counters each: basic 6 -> 1, problem-state 6 -> 1,
    # crypto 20 -> 3 (8, 8, 4), extended 160 -> 20: 25 jobs
    assert smf113.COUNTER_GROUP == 8
    jobs = 25 if by_column else 4
    assert [n for n, _r, _a in calls] == [1, jobs, 1, jobs]
    assert [a for _n, _r, a in calls[1::2]] == [False, False]   # each identity gather gone before the counters


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/self/clear_refs is Linux's")
def test_reset_peak_starts_the_peak_again():
    def peak() -> float:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024    # MiB (kB on Linux)
    a = np.ones(64 << 17)               # 64 MiB, every page touched
    a[::512] = 2.0
    del a
    memory.release(collect=False)
    high = peak()
    now = memory.rss_mb()
    assert high >= now + 48             # the 64 MiB are in the peak, no longer resident
    if not memory.reset_peak():
        pytest.skip("this kernel refuses clear_refs")
    assert peak() < high - 48           # the peak is now's resident size, not the array's


def _mapped_rss_kib(path: Path) -> int:
    """Resident KiB of this process's mappings of ``path`` (/proc/self/smaps)."""
    kib, here = 0, False
    with open("/proc/self/smaps", encoding="ascii", errors="replace") as fh:
        for line in fh:
            head = line.split()
            if head and "-" in head[0] and not head[0].endswith(":"):
                here = len(head) > 5 and head[5] == str(path)
            elif here and line.startswith("Rss:"):
                kib += int(head[1])
    return kib


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/self/smaps and madvise are Linux's")
def test_a_walk_of_slices_hands_back_the_pages_mapped_around_them(tmp_path):
    # a walk (the framing walk, a gather) maps each slice, reads it, hands it back: the kernel maps cached pages
    # beside a faulting one (its fault-around window, its large folio), so mapping a slice brings back pages
    # before it that were handed back already; drop returns those too.  Slices of 525,000 bytes (a 33.6 MB
    # chunk's framing walk steps a 64th of it) over 32 MiB read back as a file is (readahead): handed back from
    # each slice's first page only, 4.9 MiB stayed here (3.9 MiB from 64 KiB before it)
    path = tmp_path / "walk.bin"
    path.write_bytes(np.random.default_rng(3).integers(0, 256, 32 << 20, dtype=np.uint8).tobytes())
    step = 525_000
    with open(path, "rb") as fh:
        os.fsync(fh.fileno())                # out of the page cache, then read back as a file read is (readahead)
        os.posix_fadvise(fh.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
        while fh.read(1 << 20):
            pass
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as m:
            total = 0
            for a in range(0, len(m), step):
                pages.populate(m, a, a + step)
                with memoryview(m) as mv:
                    total += int(np.frombuffer(mv[a:a + step], np.uint8)[::4096].sum())   # every page read
                pages.drop(m, a, a + step)
            left = _mapped_rss_kib(path)
    assert total > 0
    assert left <= 1024          # KiB: the last slice's neighbours at most
