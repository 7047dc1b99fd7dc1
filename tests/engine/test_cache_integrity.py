"""A workspace cache that cannot lie (issue 20): single-bit flips anywhere in a cached Parquet frame or in an
entry's ``entry.json`` are either found (the entry is removed, the file decoded again, an info finding says so)
or change nothing that is served; a file rewritten with the same size and its modification time set back is
never served from its old entry."""

from __future__ import annotations

import os
import random
import shutil
import sys
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app import cache as wc
from app.formats import read_file as decode

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from smf_builders import ST2_BYTES  # noqa: E402 - the spec's subtype 2 record (smf113.md 11.1)

SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "samples"
SMF = "after_z16_ZOSB_smf113.vbs.gz"          # 1544 samples x 191 columns: a 0.37 MB samples.parquet
MON = "after_VMSYS1_monwrite.mondata.gz"      # MONWRITE: a partitions frame read on the hit itself


def _entry(cache: wc.Cache) -> Path:
    (e,) = [p for p in cache.dir.iterdir() if p.name.startswith("read-")]
    return e


def _flip(path: Path, bit: int) -> None:
    b = bytearray(path.read_bytes())
    b[bit // 8] ^= 1 << (bit % 8)
    path.write_bytes(bytes(b))


def _footer_len(path: Path) -> int:
    tail = path.read_bytes()[-8:]
    assert tail[4:] == b"PAR1"
    return int.from_bytes(tail[:4], "little") + 8


@pytest.fixture
def smf_entry(tmp_path):
    """(cache, source path, entry folder, a pristine copy of the entry, the true samples)."""
    src = tmp_path / SMF
    shutil.copy(SAMPLES / SMF, src)
    cache = wc.Cache(tmp_path / "cache")
    wc.read_file(src, cache=cache)
    entry = _entry(cache)
    good = tmp_path / "pristine"
    shutil.copytree(entry, good)
    return cache, src, entry, good, decode(src).samples


def test_flips_in_cached_samples_are_found_or_harmless(smf_entry):
    cache, src, entry, good, truth = smf_entry
    meta = cache.lookup(src)[0]._meta
    size = (good / "samples.parquet").stat().st_size
    footer = _footer_len(good / "samples.parquet")
    rng = random.Random(20)
    # 120 bits over the whole file and 60 in the footer (schema, row groups, page offsets: not covered by the
    # page checksums, so the entry keeps the footer's own CRC-32)
    bits = [rng.randrange(size * 8) for _ in range(120)] + \
           [rng.randrange((size - footer) * 8, size * 8) for _ in range(60)]
    found = harmless = 0
    for bit in bits:
        shutil.rmtree(entry, ignore_errors=True)
        shutil.copytree(good, entry)
        _flip(entry / "samples.parquet", bit)
        try:
            got = cache._frame(entry, meta, "samples")
        except wc.DamagedEntry:
            found += 1
            assert not entry.exists(), f"bit {bit}: a damaged entry must be removed"
            continue
        pd.testing.assert_frame_equal(got, truth, obj=f"samples served after flipping bit {bit}")
        harmless += 1
    # a flipped bit in lz4-compressed pages or in the footer is almost always found; what is not found must
    # have served the true frame (asserted above)
    assert found + harmless == len(bits)
    assert found >= 0.9 * len(bits)


@pytest.fixture(scope="module")
def flip_target(tmp_path_factory):
    """A cached samples frame for the property test: (cache, entry folder, pristine copy, meta, true samples)."""
    tmp = tmp_path_factory.mktemp("flips")
    src = tmp / SMF
    shutil.copy(SAMPLES / SMF, src)
    cache = wc.Cache(tmp / "cache")
    wc.read_file(src, cache=cache)
    entry = _entry(cache)
    good = tmp / "pristine"
    shutil.copytree(entry, good)
    return cache, entry, good, cache.lookup(src)[0]._meta, decode(src).samples


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(where=st.floats(min_value=0.0, max_value=1.0, exclude_max=True))
def test_any_single_bit_flip_is_found_or_harmless(flip_target, where):
    # property: whatever bit of a cached samples.parquet flips, the cache never serves other counters
    cache, entry, good, meta, truth = flip_target
    size = (good / "samples.parquet").stat().st_size
    bit = int(where * size * 8)
    shutil.rmtree(entry, ignore_errors=True)
    shutil.copytree(good, entry)
    _flip(entry / "samples.parquet", bit)
    try:
        got = cache._frame(entry, meta, "samples")
    except wc.DamagedEntry:
        assert not entry.exists()
        return
    pd.testing.assert_frame_equal(got, truth, obj=f"samples served after flipping bit {bit}")


def test_damaged_samples_are_decoded_again_with_a_finding(smf_entry):
    cache, src, entry, good, truth = smf_entry
    hit = wc.read_file(src, cache=cache)
    assert isinstance(hit, wc.CachedReadResult)
    assert not any(f.code == "cache-damaged" for f in hit.findings)
    pq = entry / "samples.parquet"
    _flip(pq, 8 * (pq.stat().st_size // 3))           # a bit inside the page data, a third into the file
    pd.testing.assert_frame_equal(hit.samples, truth)
    (f,) = [f for f in hit.findings if f.code == "cache-damaged"]
    assert f.severity == "info" and f.file == hit.file and f.offset is None
    assert "samples.parquet" in f.message and "decoded again" in f.message
    assert not entry.exists()
    # the next read decodes (and stores the file again); the finding belongs to the read that met the damage
    again = wc.read_file(src, cache=cache)
    assert not isinstance(again, wc.CachedReadResult)
    assert not any(f.code == "cache-damaged" for f in again.findings)
    assert isinstance(wc.read_file(src, cache=cache), wc.CachedReadResult)


def test_damaged_partitions_are_found_on_the_hit(tmp_path):
    src = tmp_path / MON
    shutil.copy(SAMPLES / MON, src)
    cache = wc.Cache(tmp_path / "cache")
    truth = wc.read_file(src, cache=cache)
    pq = _entry(cache) / "partitions.parquet"
    _flip(pq, 8 * (pq.stat().st_size // 4))
    res = wc.read_file(src, cache=cache)
    assert not isinstance(res, wc.CachedReadResult)
    (f,) = [f for f in res.findings if f.code == "cache-damaged"]
    assert "partitions.parquet" in f.message
    pd.testing.assert_frame_equal(res.partitions, truth.partitions)
    assert [g for g in res.findings if g.code != "cache-damaged"] == truth.findings


def test_flips_in_entry_json_are_found_or_harmless(smf_entry):
    cache, src, entry, good, truth = smf_entry
    fresh = decode(src)
    size = (good / "entry.json").stat().st_size
    rng = random.Random(7)
    found = 0
    for bit in [rng.randrange(size * 8) for _ in range(60)]:
        shutil.rmtree(entry, ignore_errors=True)
        shutil.copytree(good, entry)
        _flip(entry / "entry.json", bit)
        hit, why = cache.lookup(src)
        if hit is None:
            found += 1
            assert not entry.exists()
            continue
        # served: every field must be the file's own
        assert (hit.kind, hit.framing, hit.records, hit.size) == (fresh.kind, fresh.framing, fresh.records,
                                                                  fresh.size)
        assert hit.findings == fresh.findings
        pd.testing.assert_frame_equal(hit.samples, truth)
    assert found >= 50          # the seal covers every byte of the content; a flip in a key name is a miss too


def test_identity_holds_inode_and_change_time(tmp_path):
    p = tmp_path / "f"
    p.write_bytes(b"x")
    st = os.stat(p)
    ident = wc._file_identity(p)
    assert ident["inode"] == st.st_ino and ident["ctime_ns"] == st.st_ctime_ns


def _rewrite_keeping_size_and_mtime(path: Path, data: bytes, replace: bool) -> None:
    st = os.stat(path)
    assert len(data) == st.st_size
    if replace:                           # a new file renamed over the old one (a new inode)
        tmp = path.with_name(path.name + ".new")
        tmp.write_bytes(data)
        os.utime(tmp, ns=(st.st_atime_ns, st.st_mtime_ns))
        os.replace(tmp, path)
    else:                                 # rewritten in place (same inode)
        with open(path, "r+b") as fh:
            fh.write(data)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert os.stat(path).st_mtime_ns == st.st_mtime_ns and os.stat(path).st_size == st.st_size


@pytest.mark.parametrize("replace", [False, True])
def test_same_size_restored_mtime_is_not_served_stale(tmp_path, replace):
    # one subtype 2 record of spec smf113.md 11.1: B0 = X'00000002540BE400' = 10,000,000,000 at record offset 180
    assert ST2_BYTES[180:188] == (10_000_000_000).to_bytes(8, "big")
    path = tmp_path / "one.rdw"
    path.write_bytes(ST2_BYTES)
    cache = wc.Cache(tmp_path / "cache")
    assert wc.read_file(path, cache=cache).samples["B0"].tolist() == [10_000_000_000]
    assert isinstance(wc.read_file(path, cache=cache), wc.CachedReadResult)
    changed = ST2_BYTES[:180] + (10_000_000_001).to_bytes(8, "big") + ST2_BYTES[188:]
    _rewrite_keeping_size_and_mtime(path, changed, replace)
    res = wc.read_file(path, cache=cache)
    assert not isinstance(res, wc.CachedReadResult)
    assert res.samples["B0"].tolist() == [10_000_000_001]


def test_damaged_cached_intervals_are_computed_again_with_a_finding(tmp_path):
    """The intervals a workspace cached beside the samples: a flipped bit in intervals.parquet is found when they
    are first read, they are computed again from the samples (equal to a workspace without a cache) and an info
    finding names the file."""
    from app.engine import Workspace

    src = tmp_path / SMF
    shutil.copy(SAMPLES / SMF, src)
    cache = wc.Cache(tmp_path / "cache", background=False)
    first = Workspace(cache=cache)
    first.add(wc.read_file(src, cache=cache))
    truth = first.intervals.copy()
    (entry,) = [p for p in cache.dir.iterdir() if (p / "intervals.parquet").exists()]
    pq = entry / "intervals.parquet"
    _flip(pq, 8 * (pq.stat().st_size // 3))
    second = Workspace(cache=cache)
    second.add(wc.read_file(src, cache=cache))
    pd.testing.assert_frame_equal(second.intervals, truth)
    found = [f for f in second.findings if f.code == "cache-damaged"]
    assert len(found) == 1 and found[0].severity == "info" and "intervals" in found[0].message
    # the damaged entry was replaced by the intervals computed again: the next open reads them without a finding
    third = Workspace(cache=cache)
    third.add(wc.read_file(src, cache=cache))
    pd.testing.assert_frame_equal(third.intervals, truth)
    assert not any(f.code == "cache-damaged" for f in third.findings)
