"""A fleet dataset that cannot lie (issue 20): a damaged part file or manifest entry is left out of the answer
and named in a finding that says what the answer leaves out; ``extract`` adds a file whose manifest entry is
damaged again; leftovers of killed extracts are listed by a query and removed by the next extract.  Every
dataset is made by ``extract`` and damaged here."""

from __future__ import annotations

import json
import os
import time

import pandas as pd
import pytest

from _fleet_helpers import SAMPLES, fresh_copy, two_cec_dataset
from app.cli import main
from app.dataset import Dataset
from app.dataset.query import QuerySpec, run_query

Z16 = SAMPLES[2]        # after_z16_ZOSB_smf113.vbs.gz: CEC 3931-123F5, 8 CPUs x 192 intervals = 1536 interval rows
Z15 = SAMPLES[5]        # before_z15_ZOSB_smf113.rdw.gz: CEC 8561-45A12


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    return two_cec_dataset(tmp_path_factory.mktemp("integrity") / "ds")


@pytest.fixture
def ds(pristine, tmp_path):
    return fresh_copy(pristine, tmp_path)


def _entry(ds, name):
    (e,) = [e for e in ds.entries() if e["name"] == name]
    return e


def _lpar_rows(ds):
    return run_query(ds, QuerySpec(by="lpar"))


def _flip(path, byte):
    b = bytearray(path.read_bytes())
    b[byte] ^= 0x10
    path.write_bytes(bytes(b))


def test_sound_dataset_has_no_findings_and_records_checks(ds):
    m = _lpar_rows(ds)
    assert list(m["cec"]) == ["3931-123F5", "8561-45A12"] and ds.findings == []
    e = _entry(ds, Z16.name)
    (part,) = e["parts"]["intervals"]
    info = e["part_keys"][part]
    assert info["rows"] == 8 * 192 and info["bytes"] == (ds.root / part).stat().st_size
    assert isinstance(info["crc32"], int) and len(e["seal"]) == 64


@pytest.mark.parametrize("damage", ["page", "footer", "cut", "gone"])
def test_damaged_part_is_named_and_left_out(ds, damage):
    before = _lpar_rows(ds)
    e = _entry(ds, Z16.name)
    (part,) = e["parts"]["intervals"]
    path = ds.root / part
    size = path.stat().st_size
    if damage == "page":
        _flip(path, size // 3)
    elif damage == "footer":           # DuckDB alone: "don't know what type" for every query
        b = bytearray(path.read_bytes())
        b[size - 40:size - 8] = b"\xff" * 32
        path.write_bytes(bytes(b))
    elif damage == "cut":
        path.write_bytes(path.read_bytes()[: size // 2])
    else:
        path.unlink()
    m = _lpar_rows(ds)
    # answered from the rest: the z15 LPAR exactly as before, the z16 one left out
    pd.testing.assert_frame_equal(m, before[before["cec"] == "8561-45A12"].reset_index(drop=True))
    (f,) = ds.findings
    assert f.code == "dataset-part-damaged" and f.file == str(path) and f.severity == "warning"
    assert f"left out of this answer: 1,536 rows of {Z16.name} (CEC 3931-123F5, month 2026-11)" in f.message


def test_damaged_manifest_entry_is_named_and_extract_adds_the_file_again(ds):
    before = _lpar_rows(ds)
    e = _entry(ds, Z16.name)
    mpath = ds.root / "manifest" / f"{e['sha256']}.json"
    mpath.write_bytes(mpath.read_bytes()[:200])              # cut short: not JSON any more
    m = _lpar_rows(ds)
    pd.testing.assert_frame_equal(m, before[before["cec"] == "8561-45A12"].reset_index(drop=True))
    (f,) = ds.findings
    assert f.code == "dataset-manifest-damaged" and f.file == str(mpath)
    assert f"left out of every query: the source file with SHA-256 {e['sha256']}" in f.message
    # extract adds it again (before: "already in the dataset"), and the answer is the whole one again; the
    # parts of the damaged entry are listed by nobody, so nothing is counted twice
    r = Dataset(ds.root).extract(Z16)
    assert r.status == "added"
    again = Dataset(ds.root)
    pd.testing.assert_frame_equal(_lpar_rows(again), before)
    assert again.findings == [] and len(again.orphans()) == 2     # the old entry's samples and intervals parts


def test_manifest_entry_that_still_parses_but_changed_is_caught(ds):
    e = _entry(ds, Z16.name)
    mpath = ds.root / "manifest" / f"{e['sha256']}.json"
    text = mpath.read_text(encoding="utf-8")
    assert '"intervals": 1536' in text
    mpath.write_text(text.replace('"intervals": 1536', '"intervals": 1537'), encoding="utf-8")
    assert [x["name"] for x in ds.entries()] == [Z15.name]
    (f,) = ds.findings
    assert "does not match its checksum" in f.message


def _age(paths, seconds):
    t = time.time() - seconds
    for p in paths:
        os.utime(p, (t, t))


def test_leftovers_of_a_killed_extract_are_listed_then_cleaned(ds, monkeypatch, capsys):
    def die(self, sha, entry):                       # as if the process died before the commit
        raise KeyboardInterrupt

    with monkeypatch.context() as mp:
        mp.setattr(Dataset, "_commit", die)
        mp.setattr(Dataset, "_remove", lambda self, rels: None)
        with pytest.raises(KeyboardInterrupt):
            ds.extract(SAMPLES[3])
    tmp = ds.root / "intervals" / ".tmp-part-killed.parquet"      # killed while writing a part
    tmp.write_bytes(b"PAR1")
    left = ds.orphans()
    assert len(left) == 3
    assert ds.leftovers() == []                      # young: could be a running extract's, so kept
    _age(left, 2 * 3600)
    assert sorted(ds.leftovers()) == sorted(left)
    assert main(["query", str(ds.root), "--format", "csv"]) == 0
    err = capsys.readouterr().err
    assert "3 leftover file(s) of interrupted extracts" in err and "next `nestscope extract`" in err
    # the next extract removes them (and says so), adding nothing
    assert main(["extract", str(Z16), "--to", str(ds.root)]) == 0
    out = capsys.readouterr()
    assert "[present]" in out.out and "removed 3 leftover file(s) of interrupted extracts" in out.err
    assert Dataset(ds.root).orphans() == [] and not any(p.exists() for p in left)


def test_query_cli_names_the_damage(ds, capsys):
    e = _entry(ds, Z16.name)
    (part,) = e["parts"]["intervals"]
    _flip(ds.root / part, 100)
    assert main(["query", str(ds.root), "--format", "json"]) == 0
    out = capsys.readouterr()
    doc = json.loads(out.out)
    assert [r["cec"] for r in doc["rows"]] == ["8561-45A12"]
    (lo,) = doc["meta"]["left_out"]
    assert lo["code"] == "dataset-part-damaged" and lo["file"] == str(ds.root / part)
    assert "nestscope query: warning: " in out.err and str(ds.root / part) in out.err
    assert main(["query", str(ds.root)]) == 0
    assert "left out: " + str(ds.root / part) in capsys.readouterr().out


def test_part_of_an_older_entry_without_checks_is_read_whole(ds):
    # an entry written before issue 20 records no size or CRC-32 of its parts (and no seal)
    e = _entry(ds, Z16.name)
    mpath = ds.root / "manifest" / f"{e['sha256']}.json"
    for info in e["part_keys"].values():
        for k in ("rows", "bytes", "crc32"):
            info.pop(k)
    e.pop("seal")
    mpath.write_text(json.dumps(e), encoding="utf-8")
    before = _lpar_rows(Dataset(ds.root))
    assert len(before) == 2
    (part,) = e["parts"]["intervals"]
    path = ds.root / part
    b = bytearray(path.read_bytes())
    b[len(b) // 3:len(b) // 3 + 64] = b"\x00" * 64          # inside the compressed pages; the footer is intact
    path.write_bytes(bytes(b))
    fresh = Dataset(ds.root)
    m = _lpar_rows(fresh)
    pd.testing.assert_frame_equal(m, before[before["cec"] == "8561-45A12"].reset_index(drop=True))
    (f,) = fresh.findings
    assert f.code == "dataset-part-damaged" and "rows of" in f.message
