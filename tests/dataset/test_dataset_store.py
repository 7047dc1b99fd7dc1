"""The dataset on disk: manifest, idempotence by content, interrupted and concurrent extracts."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from _fleet_helpers import ROOT, SAMPLES
from app.dataset import Dataset, DatasetError
from app.dataset import store as store_mod
from app.dataset.query import QuerySpec, run_query

ZOSB = SAMPLES[2]       # after_z16_ZOSB_smf113.vbs.gz: 1544 subtype-2 records, 8 CPUs
ZOSC_BEFORE = SAMPLES[6]


def _files(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())


def test_manifest_entry_and_layout(tmp_path):
    import hashlib

    ds = Dataset(tmp_path / "ds", create=True)
    r = ds.extract(ZOSB)
    assert r.status == "added"
    (e,) = ds.entries()
    assert e["sha256"] == hashlib.sha256(ZOSB.read_bytes()).hexdigest()
    assert e["name"] == ZOSB.name and e["size"] == ZOSB.stat().st_size
    assert e["records"]["113/2"] == 1544 and e["samples"] == 1544
    # 1544 records of 8 CPUs = 193 per CPU; the first of each is a baseline: 8 x 192 intervals
    assert e["intervals"] == 8 * 192
    assert e["time_first"] == "2026-11-02T00:00:00Z" and e["time_last"] == "2026-11-04T00:00:00Z"
    assert e["findings"] == 0
    # Hive partitions by CEC and month
    assert all(p.startswith("samples/cec=3931-123F5/month=2026-11/part-") for p in e["parts"]["samples"])
    assert all(p.startswith("intervals/cec=3931-123F5/month=2026-11/part-") for p in e["parts"]["intervals"])
    assert ds.orphans() == []


def test_same_content_twice_adds_nothing(tmp_path):
    ds = Dataset(tmp_path / "ds", create=True)
    assert ds.extract(ZOSB).status == "added"
    before = _files(ds.root)
    copy = tmp_path / "renamed_copy.gz"
    copy.write_bytes(ZOSB.read_bytes())          # another name, same bytes
    r = ds.extract(copy)
    assert r.status == "present"
    assert _files(ds.root) == before


def test_unreadable_file_is_recorded_not_added(tmp_path):
    ds = Dataset(tmp_path / "ds", create=True)
    r = ds.extract(ROOT / "resources" / "samples" / "broken" / "notes_not_smf.txt")
    assert r.status == "unreadable" and r.findings >= 1
    (e,) = ds.entries()
    assert e["readable"] is False and e["parts"] == {"samples": [], "intervals": [], "partitions": []}


def test_interrupted_extract_leaves_dataset_as_it_was(tmp_path, monkeypatch):
    ds = Dataset(tmp_path / "ds", create=True)
    assert ds.extract(ZOSB).status == "added"
    before = _files(ds.root)
    q_before = run_query(ds, QuerySpec(by="lpar"))
    real = Dataset._write_part
    calls = {"n": 0}

    def failing(self, *a, **k):
        calls["n"] += 1
        if calls["n"] == 2:                      # the samples part is written, the intervals part is not
            raise OSError(28, "No space left on device")
        return real(self, *a, **k)

    monkeypatch.setattr(Dataset, "_write_part", failing)
    with pytest.raises(OSError):
        ds.extract(ZOSC_BEFORE)
    assert calls["n"] == 2
    assert _files(ds.root) == before
    assert len(ds.entries()) == 1
    q_after = run_query(ds, QuerySpec(by="lpar"))
    assert q_after.equals(q_before)
    monkeypatch.setattr(Dataset, "_write_part", real)
    assert ds.extract(ZOSC_BEFORE).status == "added"     # and it can be extracted afterwards


def test_killed_extract_parts_are_invisible(tmp_path, monkeypatch):
    ds = Dataset(tmp_path / "ds", create=True)

    def die(self, sha, entry):                       # as if the process died before the commit
        raise KeyboardInterrupt

    monkeypatch.setattr(Dataset, "_commit", die)
    monkeypatch.setattr(Dataset, "_remove", lambda self, rels: None)   # a hard kill removes nothing
    with pytest.raises(KeyboardInterrupt):
        ds.extract(ZOSB)
    assert ds.entries() == [] and ds.parts("intervals") == []
    assert len(ds.orphans()) == 2                    # one samples part, one intervals part, listed by nobody


def test_concurrent_extracts(tmp_path):
    # two processes extract overlapping file lists at once: every file is in the manifest exactly once
    root = tmp_path / "ds"
    Dataset(root, create=True)
    code = ("import sys; from app.dataset import Dataset; ds = Dataset(sys.argv[1]); "
            "[print(ds.extract(f).status) for f in sys.argv[2:]]")
    a = [str(SAMPLES[1]), str(SAMPLES[2]), str(SAMPLES[3])]
    b = [str(SAMPLES[3]), str(SAMPLES[2]), str(SAMPLES[5])]
    procs = [subprocess.Popen([sys.executable, "-c", code, str(root), *files], cwd=ROOT, stdout=subprocess.PIPE,
                              text=True) for files in (a, b)]
    outs = [p.communicate(timeout=120)[0].split() for p in procs]
    assert all(p.returncode == 0 for p in procs)
    assert sum(o.count("added") for o in outs) == 4          # 4 distinct files
    ds = Dataset(root)
    assert sorted(e["name"] for e in ds.entries()) == sorted({SAMPLES[i].name for i in (1, 2, 3, 5)})
    listed = set(ds.parts("samples")) | set(ds.parts("intervals"))
    on_disk = {str(p) for p in root.rglob("*.parquet")}
    assert listed == on_disk                                  # the loser of a race removed its parts
    assert json.loads((root / "nestscope-dataset.json").read_text())["format"] == "nestscope-dataset"


def test_not_a_dataset(tmp_path):
    (tmp_path / "x").mkdir()
    (tmp_path / "x" / "f.txt").write_text("hello")
    with pytest.raises(DatasetError, match="not a NestScope dataset"):
        Dataset(tmp_path / "x")
    with pytest.raises(DatasetError, match="not empty"):
        Dataset(tmp_path / "x", create=True)
    assert store_mod.cec_of_dir("cec=3931-123F5") == "3931-123F5"
