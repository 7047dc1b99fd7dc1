"""The walk of a big file's rest (issue 23, the progressive open): the compiled walk
(``_kernel.rdw_low_times``, reading the file a chunk at a time or over the mapped bytes) gives exactly what the
numpy walk gives, on clean files of every record order and on files it must refuse or partly ignore."""

from __future__ import annotations

import mmap
from pathlib import Path

import numpy as np
import pytest

from tests.ui.test_progressive import ORDERS, big_files, low_threshold  # noqa: F401  (fixtures)

pytestmark = pytest.mark.skipif(not __import__("app.formats.kernel", fromlist=["has_low_times"]).has_low_times(),
                                reason="the compiled kernel is not built (or built before rdw_low_times)")


def _offsets(data: bytes) -> np.ndarray:
    from app.formats.kernel import rdw_offsets
    from app.formats.smf_resync import MIN_LEN

    offs, _end, status = rdw_offsets(data, 0, len(data), MIN_LEN)
    assert status == 0
    return offs


def _walks(path: Path, pos: int) -> tuple:
    """(chunked file reads, over the map, numpy) walks of ``path`` from ``pos``."""
    from app.ui import progressive as P

    with open(path, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as m:
        return P.rest_min_time(m, pos, None, fh), P.rest_min_time(m, pos), P._rest_min_numpy(m, pos)


@pytest.mark.parametrize("order", ORDERS)
@pytest.mark.parametrize("chunk", [4096, 1 << 20])
def test_the_compiled_walk_is_the_numpy_walk(big_files, order, chunk, monkeypatch):  # noqa: F811
    """Cut after 0, 1, 10 and 60 % of the records: the same systems and times (a chunk of 4 KiB: records
    straddle most chunk ends; the file is about 5.5 MB)."""
    from app.ui import progressive as P

    monkeypatch.setattr(P, "WALK_CHUNK", chunk)
    path = Path(big_files[order])
    offs = _offsets(path.read_bytes())
    for frac in (0.0, 0.01, 0.1, 0.6):
        pos = int(offs[int(frac * len(offs))])
        by_file, by_map, by_numpy = _walks(path, pos)
        assert by_numpy is not None and len(by_numpy) >= 3          # systems still to come and ""
        assert by_file == by_map == by_numpy


def test_the_walk_from_the_end_finds_nothing(big_files):  # noqa: F811
    path = Path(big_files["time"])
    for walk in _walks(path, path.stat().st_size):      # NaT != NaT: each compared on its own
        assert list(walk) == [""] and np.isnat(walk[""])


def _edit(src: str, tmp_path: Path, name: str, at: float, field: int, raw: bytes) -> tuple[Path, int]:
    """A copy of ``src`` with ``raw`` written at byte ``field`` of the record at fraction ``at`` of its records
    (a field of the data section when ``field`` < 0: counted from the data offset); the record's offset."""
    from app.formats import smf113_layout as L

    data = bytearray(Path(src).read_bytes())
    offs = _offsets(bytes(data))
    rec = int(offs[int(at * len(offs))])
    if field < 0:
        dof = int.from_bytes(data[rec + L.OFF_DOF:rec + L.OFF_DOF + 4], "big")
        sty = int.from_bytes(data[rec + L.OFF_STY:rec + L.OFF_STY + 2], "big")
        field = dof + (L.S2_CTM if sty == 2 else L.S1_CTM)
    data[rec + field:rec + field + len(raw)] = raw
    out = tmp_path / name
    out.write_bytes(bytes(data))
    return out, rec


def test_a_record_the_walk_cannot_take_apart_refuses_the_rest(big_files, tmp_path):  # noqa: F811
    """Subtype 3 in the rest: no first part from any walk; the same record before the walk's start is not
    looked at."""
    from app.formats import smf113_layout as L

    path, rec = _edit(big_files["time"], tmp_path, "sty3.smf", 0.5, L.OFF_STY, b"\x00\x03")
    assert _walks(path, 0) == (None, None, None)
    by_file, by_map, by_numpy = _walks(path, _next(path, rec))
    assert by_file is not None and by_file == by_map == by_numpy


def _next(path: Path, rec: int) -> int:
    offs = _offsets(path.read_bytes())
    return int(offs[np.searchsorted(offs, rec) + 1])


def test_a_record_without_time_and_another_type_are_left_out(big_files, tmp_path):  # noqa: F811
    """A 113 record of the rest whose CTM is 0 is no sample; a record of type 30 is not one of ours: both walks
    leave them out alike (here the earliest record of the rest, in the time-ordered file: the time found moves
    on, or stays, the same for every walk)."""
    from app.formats import smf113_layout as L

    zero, _ = _edit(big_files["time"], tmp_path, "zero.smf", 0.0, -1, b"\x00" * 8)
    other, _ = _edit(big_files["time"], tmp_path, "type30.smf", 0.0, L.OFF_RTY, bytes([30]))
    clean = _walks(Path(big_files["time"]), 0)[0]
    for path in (zero, other):
        by_file, by_map, by_numpy = _walks(path, 0)
        assert by_file == by_map == by_numpy
        assert by_file[""] == clean[""]     # the other CPUs' records of that interval hold the same time


def test_a_cut_or_broken_chain_gives_no_part(big_files, tmp_path):  # noqa: F811
    data = Path(big_files["lpar"]).read_bytes()
    cut = tmp_path / "cut.smf"
    cut.write_bytes(data[:-700])
    assert _walks(cut, 0) == (None, None, None)
    short = tmp_path / "short.smf"        # a length below the SMF header's: not a clean chain
    offs = _offsets(data)
    rec = int(offs[len(offs) // 2])
    short.write_bytes(data[:rec] + b"\x00\x08" + data[rec + 2:])
    assert _walks(short, 0) == (None, None, None)
    tail = tmp_path / "tail.smf"          # fewer than 4 bytes after the last record: ignored, as the reader does
    tail.write_bytes(data + b"\x00\x00")
    assert _walks(tail, 0) == _walks(Path(big_files["lpar"]), 0)


def test_more_systems_than_the_table_holds_falls_back_to_numpy(big_files, monkeypatch):  # noqa: F811
    from app.ui import progressive as P

    monkeypatch.setattr(P, "MAX_SYSTEMS", 2)        # the files hold 3 systems
    by_file, by_map, by_numpy = _walks(Path(big_files["shuffle"]), 0)
    assert by_file is not None and by_file == by_map == by_numpy and len(by_file) == 4


def test_the_whole_read_starts_before_the_parts_decode(big_files, monkeypatch):  # noqa: F811
    """The read worker starts the whole file's read at once and decodes the first part on the walk's thread
    beside it (the part's decode used to come first, delaying the whole read by it): here the part's decode
    waits until the whole read has started, which would never happen were it still on the read's thread."""
    import threading

    from app.analysis import reading
    from app.ui import progressive as P
    from app.ui import workers

    events: list[tuple[str, str]] = []
    started = threading.Event()
    real_begin, real_read = P.begin, reading.read_one

    def begin(*a, **k):
        assert started.wait(10), "the part was decoded before the whole read started"
        events.append(("begin", threading.current_thread().name))
        return real_begin(*a, **k)

    def read_one(*a, **k):
        events.append(("read", threading.current_thread().name))
        started.set()
        return real_read(*a, **k)
    monkeypatch.setattr(P, "begin", begin)
    monkeypatch.setattr(reading, "read_one", read_one)
    worker = workers.ReadWorker(big_files["lpar"], progressive=True)
    done: list = []
    worker.signals.finished.connect(done.append)
    worker.run()
    assert [e[0] for e in events] == ["read", "begin"]
    assert events[1][1] == "nestscope-rest" and events[0][1] != "nestscope-rest"
    assert len(done) == 1 and done[0].result.readable


def test_a_file_not_wanted_progressively_starts_no_walk(big_files, monkeypatch):  # noqa: F811
    from app.ui import progressive as P
    from app.ui import workers

    monkeypatch.setenv("NESTSCOPE_PROGRESSIVE_MB", "64")       # the 5.5 MB file is read the usual way
    monkeypatch.setattr(P, "begin", lambda *a, **k: pytest.fail("no part for a small file"))
    worker = workers.ReadWorker(big_files["lpar"], progressive=True)
    assert worker._first_part() is None
    assert not P.wanted(big_files["lpar"]) and P.begin is not None


def test_a_kernel_without_the_walk_gives_the_numpy_walk(big_files, monkeypatch):  # noqa: F811
    """A compiled kernel built before ``rdw_low_times`` existed: the numpy walk, the same result."""
    from app.formats import kernel

    want = _walks(Path(big_files["time"]), 0)[0]
    assert want is not None and len(want) == 4
    monkeypatch.setattr(kernel, "has_low_times", lambda: False)
    monkeypatch.setattr(kernel, "low_times", lambda *a, **k: pytest.fail("the compiled walk"))
    by_file, by_map, by_numpy = _walks(Path(big_files["time"]), 0)
    assert by_file == by_map == by_numpy == want
