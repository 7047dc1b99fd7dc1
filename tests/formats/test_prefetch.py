"""The gzip inflate the command line starts before the command's imports (app/formats/prefetch.py): the reader
takes its pieces and gets what the plain read gives (samples, findings with their offsets, framing); a file
written or replaced after the inflate started is read fresh; a command that reads no files starts nothing; the
inflate holds at most its byte budget; a cancel reaches the reader and stops the inflate."""

from __future__ import annotations

import gzip
import os
import sys
import time
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
from app.formats import prefetch as PF  # noqa: E402
from app.formats import smf113_writer as W  # noqa: E402
from app.formats.schema import Cancelled  # noqa: E402

RECS = C.smf_records(40)


@pytest.fixture(autouse=True)
def small_pieces(monkeypatch):
    """Pieces of 512 compressed bytes, the inflate ahead from any size on, two threads; nothing left behind."""
    monkeypatch.setattr(FM, "_IN_CHUNK", 512)
    monkeypatch.setattr(GA, "PIPELINE_FROM", 0)
    monkeypatch.setenv("NESTSCOPE_THREADS", "2")
    yield
    PF.forget()


@pytest.fixture
def taken(monkeypatch):
    """What each :func:`PF.take` gave (True: the reader took the prefetched pieces)."""
    got: list[bool] = []
    real = PF.take

    def spy(*a, **k):
        e = real(*a, **k)
        got.append(e is not None)
        return e
    monkeypatch.setattr(PF, "take", spy)
    return got


def distinct(n: int, base: int = 0) -> bytes:
    """``n`` SMF 113 records in RDW framing, none repeating another (the last counter: its own number)."""
    recs = []
    for i in range(n):
        r = bytearray(RECS[i % len(RECS)])
        r[-8:] = (base + i).to_bytes(8, "big")
        recs.append(bytes(r))
    return W.frame_rdw(recs)


def summary(res) -> tuple:
    return (res.kind, res.framing, res.size, dict(res.records), res.meta.get("decompressed_size"),
            [(f.code, f.offset, f.message) for f in res.findings], res.samples.to_dict("list"), len(res.samples))


def wait_done(entry, seconds: float = 20.0) -> None:
    end = time.monotonic() + seconds
    while not entry.done and time.monotonic() < end:
        time.sleep(0.01)


def test_the_reader_takes_the_prefetched_pieces_and_reads_the_same(tmp_path, taken):
    path = tmp_path / "a.rdw.gz"
    path.write_bytes(gzip.compress(distinct(400), mtime=0))
    plain = summary(FM.read_file(str(path)))
    th = PF.start(["export", "--before", str(path), "--after", "b.gz", "--out", str(tmp_path / "x.pptx")])
    assert th is not None and th.daemon
    got = summary(FM.read_file(str(path)))
    assert taken == [False, True]          # the plain read found nothing started; the second one took it
    assert got == plain and plain[0] == "smf" and plain[7] > 0
    th.join(10)
    assert not th.is_alive()               # every file done: the thread ends


def test_damaged_and_cut_files_give_the_same_findings_and_offsets(tmp_path, taken):
    raw = bytearray(gzip.compress(distinct(300), mtime=0))
    raw[len(raw) // 2:len(raw) // 2 + 40] = bytes(40)        # deflate data damaged half-way
    dam = tmp_path / "d.gz"
    dam.write_bytes(bytes(raw))
    cut = tmp_path / "c.gz"
    cut.write_bytes(bytes(raw[:len(raw) * 3 // 4]))
    plain = [summary(FM.read_file(str(p))) for p in (dam, cut)]
    PF.start(["compare", "--before", str(dam), f"--after={cut}"])
    entries = list(PF._entries)
    for e in entries:
        wait_done(e)
    got = [summary(FM.read_file(str(p))) for p in (dam, cut)]
    # not clean gzip: the inflate ahead gave up, the readers decompressed the ordinary way
    assert taken == [False, False, False, False] and all(e.unclean for e in entries) and got == plain
    assert {"gzip-damaged", "gzip-checksum"} & {c for c, _o, _m in plain[0][5]}
    assert "gzip-cut" in {c for c, _o, _m in plain[1][5]}


@pytest.mark.parametrize("how", ["replaced", "rewritten", "touched"])
def test_a_file_changed_after_the_prefetch_started_is_read_fresh(tmp_path, taken, how):
    path = tmp_path / "a.gz"
    path.write_bytes(gzip.compress(distinct(200), mtime=0))
    PF.start(["export", str(path), "--out", str(tmp_path / "x.csv")])
    entry = next(e for e in PF._entries if e.path == str(path))
    wait_done(entry)                          # the old content inflated completely before the change
    new = gzip.compress(distinct(150, base=1000), mtime=0)
    if how == "replaced":                     # another inode under the name
        (tmp_path / "new.gz").write_bytes(new)
        os.replace(tmp_path / "new.gz", path)
    elif how == "rewritten":                  # the same inode, other bytes
        with open(path, "r+b") as fh:
            fh.write(new)
            fh.truncate()
    else:                                     # the same bytes, a new modification time
        st = os.stat(path)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 5_000_000_000))
    got = summary(FM.read_file(str(path)))
    PF.forget()
    assert taken == [False] and entry.dropped
    assert got == summary(FM.read_file(str(path)))
    if how != "touched":                      # 150 records of the new content, not the 200 inflated
        assert got[4] == len(gzip.decompress(new))


@pytest.mark.parametrize("how", ["damaged", "members", "padded", "capped", "repeats"])
def test_a_file_found_not_clean_after_the_hand_over_is_read_the_ordinary_way(tmp_path, monkeypatch, taken, how):
    """The reader takes the file before the inflate reached the damage (a budget of one piece held, pieces of
    4 KiB): the first pieces are taken, then the file is decompressed again the ordinary way: the same result.
    Zero padding after the last member is clean (gunzip_pieces makes no finding of it)."""
    monkeypatch.setattr(PF, "TAKEN_BYTES", 1)
    monkeypatch.setattr(PF, "AHEAD_BYTES", 1)
    monkeypatch.setattr(CI, "IN_CHUNK", 1024)
    monkeypatch.setattr(CI, "PIECE", 4096)
    data = distinct(600)
    raw = bytearray(gzip.compress(data, mtime=0))
    if how == "damaged":
        raw[len(raw) * 3 // 4:len(raw) * 3 // 4 + 40] = bytes(40)
    elif how == "members":
        raw += (gzip.compress(distinct(20, base=5000), mtime=0) + b"garbage!"
                + gzip.compress(distinct(10, base=6000), mtime=0))
    elif how == "padded":
        raw += bytes(3000)
    elif how == "capped":
        monkeypatch.setenv("NESTSCOPE_MAX_BYTES", str(len(data) // 2))
    else:                                     # records 100..199 again at the end: the filter removes them
        raw = bytearray(gzip.compress(data + data[100 * 244:200 * 244], mtime=0))
    path = tmp_path / "a.gz"
    path.write_bytes(bytes(raw))
    plain = summary(FM.read_file(str(path)))
    PF.start(["export", str(path)])
    entry = PF._entries[0]
    got = summary(FM.read_file(str(path)))
    assert taken == [False, True] and got == plain
    if how == "repeats":                      # the filter removed a record: the pieces were let go
        assert entry.dropped and "duplicate" in str(plain[5])
    else:
        assert entry.done and entry.unclean == (how != "padded")


def test_an_unknown_command_or_no_gzip_file_starts_nothing(tmp_path):
    path = tmp_path / "a.gz"
    path.write_bytes(gzip.compress(distinct(50), mtime=0))
    plain = tmp_path / "p.rdw"
    plain.write_bytes(distinct(50))
    assert PF.candidates(["info", str(path)]) == [] and PF.start(["info", str(path)]) is None
    assert PF.start(["report", str(path)]) is None and PF.start(["gui", str(path)]) is None
    assert PF.start(["export", str(plain), str(tmp_path), "missing.gz", "--out", "x.csv"]) is None
    assert PF._entries == []


def test_a_fifo_is_never_opened_for_the_prefetch(tmp_path):
    fifo = tmp_path / "pipe.gz"
    os.mkfifo(fifo)
    assert PF.start(["export", str(fifo)]) is None       # O_NONBLOCK open and fstat: not a regular file
    assert PF._entries == []


def test_the_inflate_waits_at_its_byte_budget(tmp_path, monkeypatch):
    """A budget of 64 KiB: the inflate stops once the pieces not taken hold that much (pieces of at most 16 KiB:
    it stops between 64 and 80 KiB), and goes on when a reader takes it."""
    monkeypatch.setattr(PF, "AHEAD_BYTES", 64 << 10)
    monkeypatch.setattr(CI, "IN_CHUNK", 1024)
    monkeypatch.setattr(CI, "PIECE", 16 << 10)
    data = distinct(2000)
    path = tmp_path / "a.gz"
    path.write_bytes(gzip.compress(data, mtime=0))
    PF.start(["export", str(path)])
    entry = PF._entries[0]
    time.sleep(0.5)
    with PF._cond:
        held, done = entry.held, entry.done
    assert not done and (64 << 10) <= held < (80 << 10) and held < len(data)
    got = FM.read_file(str(path))
    assert entry.taken and entry.done and got.meta["decompressed_size"] == len(data)


def test_a_cancel_reaches_the_reader_and_stops_the_inflate(tmp_path, monkeypatch):
    monkeypatch.setattr(PF, "AHEAD_BYTES", 64 << 10)
    path = tmp_path / "a.gz"
    path.write_bytes(gzip.compress(distinct(2000), mtime=0))
    th = PF.start(["export", str(path)])
    entry = PF._entries[0]
    asked = []

    def cancel():
        asked.append(1)
        return len(asked) > 3
    with pytest.raises(Cancelled):
        FM.read_file(str(path), cancel=cancel)
    th.join(10)
    assert entry.taken and entry.dropped and not th.is_alive() and entry.pieces == type(entry.pieces)()


def test_an_error_of_the_inflate_before_the_hand_over_is_met_on_the_ordinary_path(tmp_path, monkeypatch, taken):
    path = tmp_path / "a.gz"
    path.write_bytes(gzip.compress(distinct(100), mtime=0))

    def failing(entry):
        yield from ()
        raise MemoryError("prefetch only")
    monkeypatch.setattr(PF, "_clean_pieces", failing)
    th = PF.start(["export", str(path)])
    th.join(10)
    got = FM.read_file(str(path))
    assert taken == [False] and got.kind == "smf" and not th.is_alive()


def test_a_file_the_workspace_cache_holds_a_read_of_is_not_inflated(tmp_path, monkeypatch):
    """A warm export reads its files from the cache: the inflate would be work for nothing.  The real cache
    stores a read of a.gz (not of b.gz); a.gz is left out, b.gz inflated; a.gz changed (touched) is inflated."""
    monkeypatch.setenv("NESTSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("NESTSCOPE_CACHE_BACKGROUND", "0")
    monkeypatch.setenv("NESTSCOPE_CACHE", "1")          # the tests run without a cache (conftest)
    from app import cache

    a, b = tmp_path / "a.gz", tmp_path / "b.gz"
    a.write_bytes(gzip.compress(distinct(100), mtime=0))
    b.write_bytes(gzip.compress(distinct(100, base=500), mtime=0))
    cache.read_file(str(a))
    cache.wait_for_writes()
    th = PF.start(["export", str(a), str(b)])
    th.join(10)
    assert not th.is_alive() and [e.path for e in PF._entries] == [str(b)] and PF._entries[0].done
    PF.forget()
    st = os.stat(a)
    os.utime(a, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))
    th = PF.start(["export", str(a)])
    th.join(10)
    assert [e.path for e in PF._entries] == [str(a)]


def test_the_command_line_imports_the_prefetch_only_for_its_commands():
    """``app.cli`` checks the command before importing app.formats (the window's start must not pay for it before
    its first paint): its list is the prefetch's own, and a GUI start leaves app.formats unimported."""
    import subprocess

    from app import cli

    assert cli.PREFETCH_COMMANDS == PF.COMMANDS
    code = ("import sys, app.cli as c; c._prefetch(['gui']); c._prefetch(['info', 'x']); "
            "print('app.formats' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "False"
