"""MONWRITE clean fast path == careful walk, frame by frame (samples, mt, partitions, findings, meta)."""

from __future__ import annotations

import datetime as dt
import gzip
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402

from app.formats import monwrite as M  # noqa: E402
from app.formats import monwrite_fast as F  # noqa: E402
from app.formats import monwrite_records as R  # noqa: E402
from app.formats.monwrite_writer import (CounterRecord, MonwriteWriter, MtCounterRecord, MtRecord,  # noqa: E402
                                         Partition, PartitionCpu, _with_rdw)

SAMPLE = ROOT / "resources" / "samples" / "after_VMSYS1_monwrite.mondata.gz"


def _careful(data, name):
    return M._result(M.walk_monwrite(data, name), data, name)


def _same(data, name):
    """Fast path is taken and gives exactly what the careful walk gives; -> the fast result."""
    assert getattr(M.walk_monwrite(data, name, fast=True), "fast", None) is not None, "fast path not taken"
    a, b = M.read_monwrite(data, name), _careful(data, name)
    for frame in ("samples", "mt", "partitions"):
        pd.testing.assert_frame_equal(getattr(a, frame), getattr(b, frame), check_exact=True)
    assert a.findings == b.findings
    assert (a.records, a.meta, a.framing, a.kind, a.size) == (b.records, b.meta, b.framing, b.kind, b.size)
    return a


def _generated(n_int=6, n_cpu=6, max_bytes=200) -> bytes:
    """z16 sets (188 counters = 1504 bytes) split into 8 P-bit pieces of <= 200 bytes; D5R20 for the even CPUs
    only (so odd CPUs' rows carry no M counters), 2 threads per core, D0R2 MT, D0R16 for 2 partitions."""
    rng = np.random.default_rng(11)
    w = MonwriteWriter("VMEQ", "LPEQ", 2, "3931", "A01", "00000000000B3E7C", max_counter_bytes=max_bytes)
    w.config(processors=[(c, 3, c // 2) for c in range(n_cpu)], partitions_defined=2)
    tot = rng.integers(0, 2**40, size=(n_cpu, 188), dtype=np.uint64)
    mt = rng.integers(0, 2**30, size=(n_cpu, 48), dtype=np.uint64)
    busy = np.zeros(2)
    for i in range(n_int):
        tot += rng.integers(0, 2**30, size=tot.shape, dtype=np.uint64)
        mt += np.uint64(1000)
        busy += rng.uniform(0, 60e6, 2)
        raw, rawm = tot.astype(">u8"), mt.astype(">u8")
        parts = [Partition("LPEQ", 2, [PartitionCpu(c, "IFL", 100, int(busy[0])) for c in range(n_cpu)]),
                 Partition("ZOS1", 1, [PartitionCpu(c, "CP", 50, int(busy[1])) for c in range(2)])]
        w.sample_interval(dt.datetime(2024, 3, 15) + dt.timedelta(minutes=i),
                          counters=[CounterRecord(c, raw[c].tobytes(), 0x000F, 3, 7, 5200) for c in range(n_cpu)],
                          mt_counters=[MtCounterRecord(c, rawm[c].tobytes()) for c in range(0, n_cpu, 2)],
                          mt=[MtRecord(c, c // 2, 3, 1.6, 1.5, 80.0, 0.9, 72.0, 1.2, 1.3) for c in range(n_cpu)],
                          partitions=parts, npar=2)
    return w.to_bytes()


@pytest.fixture(scope="module")
def sample() -> bytes:
    return gzip.decompress(SAMPLE.read_bytes())


def test_bundled_sample_fast_equals_careful(sample):
    r = _same(sample, "after_VMSYS1_monwrite.mondata")
    assert len(r.samples) > 0 and len(r.mt) > 0 and len(r.partitions) > 0


def _blocks_prefix(data: bytes, min_bytes: int) -> bytes:
    """The whole blocks (control record + its pages) that cover at least ``min_bytes``."""
    off = 0
    while off < min(min_bytes, len(data)):
        ents = M._control_entries(data, off)
        off += R.PAGE + sum(((t >> 12) - (s >> 12) + 1) * R.PAGE for _f, _a, _b, s, t in ents)
    return data[:off]


def test_bundled_sample_rdw_copy_fast_equals_careful(sample):
    head = _blocks_prefix(sample, 400 * R.PAGE)
    data = _with_rdw(head)                          # whole blocks, each 4096-byte page behind X'10040000'
    r = _same(data, "rdw.mondata")
    assert r.framing == "monwrite-rdw" and len(r.samples) > 0
    # offsets are file offsets: every stream page p sits at 4 + p * 4100 in the RDW file
    plain = _careful(head, "plain.mondata")
    o = plain.samples["offset"].to_numpy()
    assert (r.samples["offset"].to_numpy() == o // R.PAGE * (R.PAGE + 4) + 4 + o % R.PAGE).all()


def test_p_bit_split_file_fast_equals_careful():
    data = _generated()
    r = _same(data, "gen.mondata")
    # 1504 counter bytes in pieces of <= 200 bytes -> 8 D5R13 records per CPU per interval (6 x 6 x 8 = 288)
    assert r.records["D5R13"] == 6 * 6 * 8
    assert len(r.samples) == 6 * 6                  # one row per CPU per interval
    # M counters: CPUs 0, 2, 4 are thread 0 of cores 0, 1, 2 and have D5R20; odd CPUs have none
    m = r.samples["M448"].to_numpy()
    assert (m[r.samples["cpu"].to_numpy() % 2 == 1] == 0).all() and (m[r.samples["cpu"].to_numpy() % 2 == 0] > 0).all()


def test_p_bit_split_rdw_copy_fast_equals_careful():
    r = _same(_with_rdw(_generated(n_int=3)), "gen.rdw")
    assert r.framing == "monwrite-rdw" and len(r.samples) == 3 * 6


def test_irregular_file_takes_the_careful_walk():
    clean = _generated(n_int=3)
    fos, _marks = M._frame_records(M._Walk(clean, "x", None, None, None))
    data = bytearray(clean)
    # damage the MRHDRLEN (5 < 20) of a record header in the middle: the careful walk reports it
    f = fos[len(fos) // 2]
    data[f:f + 2] = b"\x00\x05"
    assert M._fast_walk(bytes(data), "bad", None, None, None) is None
    a, b = M.read_monwrite(bytes(data), "bad"), _careful(bytes(data), "bad")
    assert any(f.code == "bad-record-header" for f in a.findings)
    pd.testing.assert_frame_equal(a.samples, b.samples)
    assert a.findings == b.findings


def test_series_open_at_end_takes_the_careful_walk():
    w = MonwriteWriter("VMEQ", "LPEQ", 2, "3931", "A01", "00000000000B3E7C", max_counter_bytes=200)
    w.config(processors=[(0, 3, 0)])
    raw = np.arange(188, dtype=">u8").tobytes()
    w.sample_interval(dt.datetime(2024, 3, 15), counters=[CounterRecord(0, raw, 0x000F, 3, 7, 5200)])
    data = bytearray(w.to_bytes())
    u = np.frombuffer(bytes(data), np.uint8)
    # set the P bit on the last D5R13 piece: its series never closes
    last = max(i for i in range(0, len(data) - 8) if u[i + 4] == 5 and u[i + 6:i + 8].tobytes() == b"\x00\x0d"
               and u[i + 2:i + 4].tobytes() == b"\x00\x00" and 40 <= int.from_bytes(data[i:i + 2], "big") <= 4096
               and int.from_bytes(data[i + 20:i + 22], "big") == 0 and int.from_bytes(data[i + 32:i + 34], "big") == 3)
    data[last + 5] |= R.P_BIT
    assert M._fast_walk(bytes(data), "open", None, None, None) is None
    a = M.read_monwrite(bytes(data), "open")
    assert any(f.code == "incomplete-series" for f in a.findings) and len(a.samples) == 0


def test_random_damage_fast_equals_careful():
    """Single damaged bytes anywhere (headers, control records, counter fields, P bits): whichever path
    reads the file, the result is the careful walk's, frame by frame and finding by finding."""
    clean = _generated(n_int=2, n_cpu=4)
    rng = np.random.default_rng(5)
    fast_taken = 0
    for _ in range(60):
        data = bytearray(clean)
        for p in rng.integers(0, len(data), size=int(rng.integers(1, 4))).tolist():
            data[p] = int(rng.integers(0, 256))
        data = bytes(data)
        fast_taken += getattr(M.walk_monwrite(data, "d", fast=True), "fast", None) is not None
        a, b = M.read_monwrite(data, "d"), _careful(data, "d")
        for frame in ("samples", "mt", "partitions"):
            pd.testing.assert_frame_equal(getattr(a, frame), getattr(b, frame), check_exact=True)
        assert a.findings == b.findings and a.records == b.records and a.meta == b.meta
    assert fast_taken > 0        # most single-byte changes land in counter values: still a clean file


def test_fast_path_progress_and_cancel():
    from app.formats.schema import Cancelled
    data = _generated(n_int=20, n_cpu=4)
    assert getattr(M.walk_monwrite(data, "c", fast=True), "fast", None) is not None
    seen = []
    M.read_monwrite(data, "c", progress=seen.append)
    assert seen == [1.0]                    # the fast path reports once, at its end
    with pytest.raises(Cancelled):          # cancel is asked every 16 control records (20 intervals: > 16 blocks)
        M.read_monwrite(data, "c", cancel=lambda: True)


def test_piecewise_join_equals_window_gather():
    """The per-series join (used when series are cut into pieces differently) gives the same words as the
    sliding-window gather of the uniform case."""
    data = _generated(n_int=2, n_cpu=4)
    w = M.walk_monwrite(data, "j", fast=True)
    s = w.fast["mfc"]
    idx = np.flatnonzero(~s["mt"])
    assert (s["npieces"][idx] == 8).all()              # 1504 bytes in pieces of <= 200 bytes
    joined = F._series_words(data, s, idx)
    full = np.zeros((len(idx), joined.shape[1] + 3), np.uint64)
    assert F._put_series_words(data, s, idx, full, np.arange(len(idx)), 3)
    assert (full[:, 3:] == joined.astype(np.uint64)).all() and (full[:, :3] == 0).all()
    # the first counter word of the first series is the first 8 counter bytes of its first record
    f = int(s["pstart"][s["pfirst"][idx[0]]])
    assert int(full[0, 3]) == int.from_bytes(data[f:f + 8], "big")
