"""The workspace cache's background writer (app/cache/writer.py, ``Cache(background=True)``, what the window and the
CLI use): the first open goes on while the Parquet files are written; every later read of the cache, in this
process or through another Cache object, sees complete entries; a frame changed by the caller after the store
does not change what was stored."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import numpy as np
import pandas as pd

from app import cache as wc
from app.engine import Workspace

SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "samples"
SMF = "after_z16_ZOSB_smf113.vbs.gz"


def _copy(tmp_path: Path) -> Path:
    d = tmp_path / "data"
    d.mkdir()
    shutil.copy(SAMPLES / SMF, d / SMF)
    return d / SMF


def test_background_store_returns_before_the_write_and_reads_wait_for_it(tmp_path, monkeypatch):
    path = _copy(tmp_path)
    bg = wc.Cache(tmp_path / "c", background=True)
    gate = threading.Event()
    real = wc.Cache._write_entry

    def slow(self, *a, **k):        # hold the writer until the caller has gone on
        gate.wait(10)
        return real(self, *a, **k)
    monkeypatch.setattr(wc.Cache, "_write_entry", slow)
    fresh = wc.read_file(path, cache=bg)
    assert fresh.meta["cache_key"]                                   # the key is known at once
    assert not bg.dir.exists() or not any(p.name.startswith("read-") for p in bg.dir.iterdir())  # not yet
    gate.set()
    other = wc.Cache(tmp_path / "c")                                 # another object, same folder
    hit = other.load_result(path)                                    # waits for the pending write
    assert isinstance(hit, wc.CachedReadResult)
    pd.testing.assert_frame_equal(hit.samples, fresh.samples)
    assert other.info().entries == 1


def test_changes_after_the_store_do_not_reach_the_entry(tmp_path):
    path = _copy(tmp_path)
    bg = wc.Cache(tmp_path / "c", background=True)
    fresh = wc.read_file(path, cache=bg)
    before = fresh.samples.copy()
    fresh.samples["B0"] = np.uint64(7)                  # the caller changes its frame right after the store
    del fresh.samples["B1"]
    wc.wait_for_writes()
    hit = bg.load_result(path)
    pd.testing.assert_frame_equal(hit.samples, before)


def test_workspace_intervals_through_a_background_cache(tmp_path):
    path = _copy(tmp_path)
    bg = wc.Cache(tmp_path / "c", background=True)
    ws1 = Workspace(cache=bg)
    ws1.add(wc.read_file(path, cache=bg))
    iv1 = ws1.intervals
    ws2 = Workspace(cache=wc.Cache(tmp_path / "c"))
    ws2.add(wc.read_file(path, cache=wc.Cache(tmp_path / "c")))
    pd.testing.assert_frame_equal(ws2.intervals, iv1)
    kinds = {p.name.split("-", 1)[0] for p in (tmp_path / "c").iterdir()}
    assert {"read", "iv"} <= kinds


def test_paused_writes_wait_and_a_reader_completes_them_itself(tmp_path):
    path = _copy(tmp_path)
    bg = wc.Cache(tmp_path / "c", background=True)
    with wc.writes_paused():
        fresh = wc.read_file(path, cache=bg)
        import time

        time.sleep(0.3)                        # the writer thread must not start while paused
        assert not (tmp_path / "c").exists() or not any(p.name.startswith("read-") for p in (tmp_path / "c").iterdir())
        hit = bg.load_result(path)             # needs the entry: written now, on this thread (no deadlock)
        assert isinstance(hit, wc.CachedReadResult)
        pd.testing.assert_frame_equal(hit.samples, fresh.samples)
    wc.wait_for_writes()
    assert bg.info().entries == 1


def test_read_with_digest_hashes_beside_the_decode(tmp_path, monkeypatch):
    import hashlib

    from app.formats.schema import Cancelled

    path = _copy(tmp_path)
    monkeypatch.setenv("NESTSCOPE_CACHE_DIR", str(tmp_path / "c"))
    monkeypatch.setenv("NESTSCOPE_CACHE", "1")
    threads = []

    def sha1(p):
        threads.append(threading.current_thread().name)
        return hashlib.sha1(Path(p).read_bytes()).hexdigest()
    res, digest = wc.read_with_digest(path, sha1)
    assert digest == hashlib.sha1(path.read_bytes()).hexdigest() and len(res.samples) > 0
    assert threads == ["nestscope-digest"]                 # hashed on its own thread, not before the decode
    wc.wait_for_writes()
    hit, again = wc.read_with_digest(path, sha1)           # second time: both from the cache, no hashing
    assert again == digest and isinstance(hit, wc.CachedReadResult) and len(threads) == 1

    def cancelled(p):
        raise Cancelled()
    path.touch()                                           # a changed mtime: the entry no longer matches
    import os
    os.utime(path, (1, 1))
    try:
        wc.read_with_digest(path, cancelled)
    except Cancelled:
        pass
    else:
        raise AssertionError("a cancel while hashing must reach the caller")


def test_a_pause_nobody_releases_stops_holding_the_writer(tmp_path, monkeypatch):
    import time

    path = _copy(tmp_path)
    monkeypatch.setattr(wc.writer, "PAUSE_LIMIT_S", 0.5)
    forgotten = wc.pause_writes()                    # e.g. a window closed in the middle of a load
    try:
        wc.read_file(path, cache=wc.Cache(tmp_path / "c", background=True))
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not any((tmp_path / "c").glob("read-*")):
            time.sleep(0.1)
        assert any((tmp_path / "c").glob("read-*"))    # written by the writer thread after the limit
    finally:
        forgotten.release()
        forgotten.release()                            # idempotent


EXIT_WRITE = """
import sys
from app import cache as wc
wc.pause_writes()          # held: the write is done at exit (app.cache.writer's atexit), as when a window closes
r = wc.read_file(sys.argv[1], cache=wc.Cache(sys.argv[2], background=True))
print(len(r.partitions))
"""


def test_writes_completed_at_exit_keep_long_frames(tmp_path):
    """Issue 23: a write completed at exit whose frame pyarrow converts on its thread pool (more rows than 100 per
    column: the MONWRITE sample's partitions, 12,960 x 10) was lost ("cannot schedule new futures after
    interpreter shutdown"): the start's demo, closed at once, had no entry for its first file next time."""
    import os
    import subprocess
    import sys

    d = tmp_path / "data"
    d.mkdir()
    mon = "after_VMSYS1_monwrite.mondata.gz"
    shutil.copy(SAMPLES / mon, d / mon)
    root = Path(__file__).resolve().parents[2]
    p = subprocess.run([sys.executable, "-c", EXIT_WRITE, str(d / mon), str(tmp_path / "c")], capture_output=True,
                       text=True, cwd=root, timeout=300, env=dict(os.environ, PYTHONPATH=str(root)))
    assert p.returncode == 0, p.stderr
    rows = int(p.stdout.split()[-1])
    assert rows > 100 * 10                      # long enough for pyarrow's threads (the case that was lost)
    hit = wc.Cache(tmp_path / "c").load_result(d / mon)
    assert isinstance(hit, wc.CachedReadResult)
    fresh = wc.read_file(d / mon, cache=False)
    pd.testing.assert_frame_equal(hit.partitions.reset_index(drop=True), fresh.partitions.reset_index(drop=True))
    pd.testing.assert_frame_equal(hit.samples, fresh.samples)


SMF3 = ("after_z16_ZOSB_smf113.vbs.gz", "before_z15_ZOSB_smf113.rdw.gz", "before_z15_ZOSC_smf113.rdw.gz")


def _copies(tmp_path: Path) -> list[Path]:
    d = tmp_path / "data3"
    d.mkdir()
    for name in SMF3:
        shutil.copy(SAMPLES / name, d / name)
    return [d / name for name in SMF3]


def test_at_exit_the_waiting_thread_writes_what_the_writer_has_not_started(tmp_path, monkeypatch):
    """Issue 23: ``wait_for_writes`` (the process's exit) writes the queued entries no thread has started on its own
    thread, from the last queued, while the writer thread is busy with one: the two write side by side instead of
    this one waiting for the writer to do them one after the other.  Every entry is complete afterwards."""
    paths = _copies(tmp_path)
    bg = wc.Cache(tmp_path / "c", background=True)
    busy = threading.Event()
    gate = threading.Event()
    who: list[tuple[str, str]] = []
    real = wc.Cache._write_entry

    def write(self, kind, key, *a, **k):
        who.append((threading.current_thread().name, kind))
        if threading.current_thread().name == "nestscope-cache-writer" and not busy.is_set():
            busy.set()
            gate.wait(10)              # the writer holds its first entry until this thread has written the others
        return real(self, kind, key, *a, **k)
    monkeypatch.setattr(wc.Cache, "_write_entry", write)
    with wc.writes_paused():
        results = [wc.read_file(p, cache=bg) for p in paths]       # three read entries queued, held
    assert busy.wait(10)                                          # the writer took the first
    done = threading.Thread(target=lambda: (wc.wait_for_writes(), gate.set()), name="exit-like")
    done.start()
    done.join(1.0)                     # the other two written on that thread meanwhile; then it waits for the first
    assert [th for th, _k in who].count("exit-like") == 2, who
    gate.set()
    done.join(10)
    assert not done.is_alive()
    assert bg.info().entries == 3
    for p, r in zip(paths, results):
        pd.testing.assert_frame_equal(wc.Cache(tmp_path / "c").load_result(p).samples, r.samples)


def test_write_while_writes_held_entries_on_this_thread_while_busy(tmp_path, monkeypatch):
    """``write_while(busy)``: the queued entries no thread has started, first queued first, written on the calling
    thread although the writer thread is held (a comparison deck's before side, its work done while the after side
    is still read), one at a time and only while ``busy()``; the writer thread the rest once let go."""
    paths = _copies(tmp_path)
    bg = wc.Cache(tmp_path / "c", background=True)
    who: list[str] = []
    real = wc.Cache._write_entry

    def write(self, *a, **k):
        who.append(threading.current_thread().name)
        return real(self, *a, **k)
    monkeypatch.setattr(wc.Cache, "_write_entry", write)
    pause = wc.pause_writes()
    try:
        [wc.read_file(p, cache=bg) for p in paths]
        answers = iter([True, True, False, True])               # busy for two entries, then not
        assert wc.writer.write_while(lambda: next(answers)) == 2
        assert who == [threading.current_thread().name] * 2     # on this thread, the writer thread still held
        written = sorted(p.name for p in (tmp_path / "c").iterdir() if p.name.startswith("read-"))
        assert len(written) == 2
        assert wc.writer.write_while(lambda: False) == 0        # not busy: nothing
    finally:
        pause.release()
    wc.wait_for_writes()
    assert bg.info().entries == 3 and len(who) == 3
