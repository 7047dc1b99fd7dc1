"""The extract's content hash made in a thread (app/dataset/content_hash.py): the same SHA-256 as hashlib of the
whole file, and a file the dataset holds already still adds nothing (looked up where the hash is first needed)."""

from __future__ import annotations

import gzip
import hashlib
import mmap

import pytest

from _fleet_helpers import SAMPLES
from app.dataset import Dataset
from app.dataset import content_hash

ZOSA = next(p for p in SAMPLES if p.name == "after_z16_ZOSA_smf113.rdw.gz")


def _files(root):         # (the lock file records who took the lock last: not the dataset's content)
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and p.name != ".nestscope-lock")


def test_sha256_of_a_map_in_small_steps_is_hashlib_of_the_bytes(tmp_path):
    raw = bytes(range(256)) * 40_000 + b"tail"           # 10,240,004 bytes: 5 steps of 2 MiB, the last partial
    p = tmp_path / "f.bin"
    p.write_bytes(raw)
    want = hashlib.sha256(raw).hexdigest()
    with open(p, "rb") as fh, mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        assert content_hash.sha256_of(mm, content_hash.STEP) == want
        h = content_hash.ContentHash(mm)
        assert h.result() == want
        assert mm[:4] == raw[:4]                         # pages handed back are read again from the file
    assert content_hash.ContentHash(raw).result() == want
    assert content_hash.ContentHash(b"").result() == hashlib.sha256(b"").hexdigest()


def test_a_failure_in_the_thread_is_raised_by_result():
    h = content_hash.ContentHash(12345)                  # not a buffer: memoryview() raises TypeError
    with pytest.raises(TypeError):
        h.result()


def test_extract_entry_named_by_the_whole_files_hash_in_chunks(tmp_path, monkeypatch):
    # a plain (not gzipped) file, read a chunk at a time: the hash thread runs beside the first chunk's decoding
    plain = tmp_path / "zosa.rdw"
    plain.write_bytes(gzip.decompress(ZOSA.read_bytes()))
    monkeypatch.setenv("NESTSCOPE_EXTRACT_CHUNK_MB", "0.25")
    ds = Dataset(tmp_path / "ds", create=True)
    r = ds.extract(plain)
    assert r.status == "added" and r.entry.get("chunks", 1) > 1
    sha = hashlib.sha256(plain.read_bytes()).hexdigest()
    assert r.sha256 == sha and [e["sha256"] for e in ds.entries()] == [sha]
    parts = [p for t in ("samples", "intervals") for p in r.entry["parts"][t]]
    assert parts and all(p.split("/")[-1].startswith(f"part-{sha[:12]}-") for p in parts)


@pytest.mark.parametrize("chunk_mb", ["0.25", "64"])
def test_a_file_held_already_adds_nothing_and_writes_nothing(tmp_path, monkeypatch, chunk_mb):
    # 7,784,976 bytes: in chunks of 0.25 MB (hashed in the thread, looked up before the first part is written)
    # or in one piece (hashed first, as before)
    plain = tmp_path / "zosa.rdw"
    plain.write_bytes(gzip.decompress(ZOSA.read_bytes()))
    monkeypatch.setenv("NESTSCOPE_EXTRACT_CHUNK_MB", chunk_mb)
    ds = Dataset(tmp_path / "ds", create=True)
    assert ds.extract(plain).status == "added"
    ds.save_index()
    before = {p: (tmp_path / "ds" / p).read_bytes() for p in _files(tmp_path / "ds")}
    copy = tmp_path / "copy-of-zosa.rdw"                # another name, the same content
    copy.write_bytes(plain.read_bytes())
    ds2 = Dataset(tmp_path / "ds")
    r = ds2.extract(copy)
    assert r.status == "present" and "same SHA-256" in r.message
    assert r.sha256 == hashlib.sha256(plain.read_bytes()).hexdigest()
    assert not ds2._pending
    ds2.save_index()
    assert {p: (tmp_path / "ds" / p).read_bytes() for p in _files(tmp_path / "ds")} == before


def test_a_file_of_one_chunk_held_already_is_not_read(tmp_path, monkeypatch):
    # at most a chunk of input: hashed before anything else, as before the thread (a held file is never decoded)
    from app.formats import chunks

    plain = tmp_path / "zosa.rdw"
    plain.write_bytes(gzip.decompress(ZOSA.read_bytes()))
    monkeypatch.setenv("NESTSCOPE_EXTRACT_CHUNK_MB", "64")
    assert Dataset(tmp_path / "ds", create=True).extract(plain).status == "added"

    def no_reading(*a, **k):
        raise AssertionError("a file held already was read")
    monkeypatch.setattr(chunks, "read_chunks", no_reading)
    assert Dataset(tmp_path / "ds").extract(plain).status == "present"
    with pytest.raises(AssertionError):         # (the patch is what a reading would meet)
        Dataset(tmp_path / "ds2", create=True).extract(plain)
