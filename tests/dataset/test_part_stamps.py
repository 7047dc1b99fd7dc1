"""A query does not read again, for its CRC-32, a part that an earlier process found sound and that has not changed
since (issue 24: the first query of a process); a part changed on disk is still caught.  A new process is
simulated by emptying the module's per-process caches (``_CHECKED``, ``_STAMPS``): the stamps then come from the
user's cache folder alone."""

from __future__ import annotations

import os
import time
import zlib
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _fleet_helpers import SAMPLES, fresh_copy, two_cec_dataset
from app.dataset import Dataset, integrity
from app.dataset.query import QuerySpec, run_query

Z16 = SAMPLES[2]        # after_z16_ZOSB_smf113.vbs.gz: CEC 3931-123F5


@pytest.fixture(autouse=True)
def stamps_on(tmp_path, monkeypatch):
    """The user's cache on (the test session turns it off), in the test's own folder; every part old enough to
    be stamped (the parts here were written a moment ago)."""
    monkeypatch.setenv("NESTSCOPE_CACHE", "1")
    monkeypatch.setenv("NESTSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(integrity, "STAMP_SETTLE_S", 0.0)
    new_process(monkeypatch)


def new_process(monkeypatch) -> None:
    monkeypatch.setattr(integrity, "_CHECKED", {})
    monkeypatch.setattr(integrity, "_STAMPS", {})


@pytest.fixture
def crc_reads(monkeypatch) -> list[str]:
    reads: list[str] = []
    real = integrity.file_crc32

    def counting(path):
        reads.append(str(path))
        return real(path)
    monkeypatch.setattr(integrity, "file_crc32", counting)
    return reads


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    return two_cec_dataset(tmp_path_factory.mktemp("stamps") / "ds")


@pytest.fixture
def ds(pristine, tmp_path):
    return fresh_copy(pristine, tmp_path)


def _z16_part(ds) -> Path:
    (e,) = [e for e in ds.entries() if e["name"] == Z16.name]
    (part,) = e["parts"]["intervals"]
    return ds.root / part


def _rewrite_keeping_mtime(path: Path, data: bytes) -> None:
    """Write ``data`` over the file in place and set its modification time back (what a careless copy or a
    tool that keeps times does); only its change time says it was written."""
    st = os.stat(path)
    with open(path, "r+b") as fh:
        fh.write(data)
        fh.truncate()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    if os.stat(path).st_ctime_ns == st.st_ctime_ns:      # within one tick of the clock file times take
        time.sleep(0.02)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))      # (sets the change time again: now)
    if os.stat(path).st_ctime_ns == st.st_ctime_ns:
        pytest.skip("the filesystem kept the change time of a rewritten file")


NO_STAMPS_HERE = pytest.mark.skipif(os.name == "nt", reason="no stamps on Windows (st_ctime is the creation time)")


@NO_STAMPS_HERE
def test_a_part_checked_by_an_earlier_process_is_not_read_again(ds, crc_reads, monkeypatch):
    first = run_query(ds, QuerySpec(by="lpar"))
    n_parts = len(ds.parts("intervals"))
    assert n_parts == 2 and len(crc_reads) == n_parts          # the first process reads each part once
    stamps = list((Path(os.environ["NESTSCOPE_CACHE_DIR"])).glob("dataset-checks-*.txt"))
    assert len(stamps) == 2                                  # one per partition directory (2 CECs, 1 month each)
    new_process(monkeypatch)
    crc_reads.clear()
    again = run_query(Dataset(ds.root), QuerySpec(by="lpar"))
    assert crc_reads == [] and again.equals(first)


def test_a_part_changed_since_its_stamp_is_caught(ds, crc_reads, monkeypatch):
    before = run_query(ds, QuerySpec(by="lpar"))
    path = _z16_part(ds)
    b = bytearray(path.read_bytes())
    b[len(b) // 3] ^= 0x10                                   # same size, same modification time
    _rewrite_keeping_mtime(path, bytes(b))
    new_process(monkeypatch)
    d2 = Dataset(ds.root)
    m = run_query(d2, QuerySpec(by="lpar"))
    assert list(m["cec"]) == ["8561-45A12"] and list(before["cec"]) == ["3931-123F5", "8561-45A12"]
    (f,) = d2.findings
    assert f.code == "dataset-part-damaged" and f.file == str(path) and "CRC-32" in f.message
    assert str(path) in crc_reads


@NO_STAMPS_HERE
def test_a_part_replaced_by_an_equal_copy_is_read_again_once(ds, crc_reads, monkeypatch):
    run_query(ds, QuerySpec(by="lpar"))
    path = _z16_part(ds)
    copy = path.with_name(".copy")
    copy.write_bytes(path.read_bytes())
    os.replace(copy, path)                                   # another inode: read again, still sound
    new_process(monkeypatch)
    crc_reads.clear()
    d2 = Dataset(ds.root)
    assert len(run_query(d2, QuerySpec(by="lpar"))) == 2 and d2.findings == []
    assert crc_reads == [str(path)]
    new_process(monkeypatch)
    crc_reads.clear()
    run_query(Dataset(ds.root), QuerySpec(by="lpar"))
    assert crc_reads == []                                   # stamped again by the read above


def test_no_stamps_without_the_cache_nor_outside_a_query(ds, crc_reads, monkeypatch, tmp_path):
    cache = Path(os.environ["NESTSCOPE_CACHE_DIR"])
    monkeypatch.setenv("NESTSCOPE_CACHE", "0")
    run_query(ds, QuerySpec(by="lpar"))
    assert not cache.exists()
    new_process(monkeypatch)
    crc_reads.clear()
    run_query(Dataset(ds.root), QuerySpec(by="lpar"))
    assert len(crc_reads) == 2                               # every process reads every part
    # with stamps: `dataset check` (parts() outside a query) still reads every part
    monkeypatch.setenv("NESTSCOPE_CACHE", "1")
    run_query(Dataset(ds.root), QuerySpec(by="lpar"))
    new_process(monkeypatch)
    crc_reads.clear()
    assert len(Dataset(ds.root).parts("intervals")) == 2 and len(crc_reads) == 2


def test_a_part_changed_just_before_its_check_is_not_stamped(ds, crc_reads, monkeypatch):
    monkeypatch.setattr(integrity, "STAMP_SETTLE_S", 3600.0)   # every part "just written"
    run_query(ds, QuerySpec(by="lpar"))
    new_process(monkeypatch)
    crc_reads.clear()
    run_query(Dataset(ds.root), QuerySpec(by="lpar"))
    assert len(crc_reads) == 2


def test_a_damaged_stamp_file_is_ignored(ds, crc_reads, monkeypatch):
    run_query(ds, QuerySpec(by="lpar"))
    for f in Path(os.environ["NESTSCOPE_CACHE_DIR"]).glob("dataset-checks-*.txt"):
        f.write_bytes(b"\x00\xffnot\ta\tstamp\n" + f.read_bytes()[: f.stat().st_size // 2] + b"\n\t\t\n")
    new_process(monkeypatch)
    crc_reads.clear()
    d2 = Dataset(ds.root)
    assert len(run_query(d2, QuerySpec(by="lpar"))) == 2 and d2.findings == []
    assert 1 <= len(crc_reads) <= 2                          # the cut line's part (at least) read again


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.binary(min_size=1, max_size=300), at=st.integers(0, 10**6), flip=st.integers(1, 255),
       grow=st.integers(0, 2))
def test_any_rewrite_of_a_stamped_file_is_caught(tmp_path, monkeypatch, data, at, flip, grow):
    """Whatever byte is changed (and the size kept or not, the modification time set back), a stamped file
    is read again and its CRC-32 found wrong."""
    path = tmp_path / "part.parquet"
    path.write_bytes(data)
    info = {"bytes": len(data), "crc32": zlib.crc32(data)}
    new_process(monkeypatch)
    with integrity.stamped_checks():
        assert integrity.part_problem(path, info) == ""
    b = bytearray(data)
    b[at % len(b)] ^= flip
    changed = bytes(b) + b"\x00" * grow
    _rewrite_keeping_mtime(path, changed)
    info2 = dict(info, bytes=len(changed))                  # (a size check alone would not see it)
    new_process(monkeypatch)
    with integrity.stamped_checks():
        why = integrity.part_problem(path, info2)
    assert why.startswith("CRC-32 ") and f"{zlib.crc32(changed):08X}" in why
