"""Issue 20: ``extract`` reads through the same guarded opening as every other command (FIFO and devices refused
without reading, the size cap, file names that are not valid UTF-8)."""

from __future__ import annotations

import json
import os
import sys
import threading
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
for _p in (str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "fuzz")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import corpus as C  # noqa: E402
from app.cli import main  # noqa: E402
from app.dataset import Dataset  # noqa: E402


def within(seconds, fn, *a):
    """Run fn in a thread; fail (instead of hanging the suite) when it does not return in time."""
    box = {}
    t = threading.Thread(target=lambda: box.setdefault("r", fn(*a)), daemon=True)
    t.start()
    t.join(seconds)
    assert not t.is_alive(), f"did not return within {seconds} s (blocked)"
    return box["r"]


def test_extract_refuses_a_fifo_without_blocking(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    ds = Dataset(tmp_path / "ds", create=True)
    r = within(10, ds.extract, fifo)
    assert r.status == "error" and "named pipe (FIFO)" in r.message and not ds.entries()


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_extract_refuses_dev_zero_without_reading_it(tmp_path):
    ds = Dataset(tmp_path / "ds", create=True)
    r = within(10, ds.extract, "/dev/zero")
    assert r.status == "error" and "is a device, not a regular file" in r.message and not ds.entries()


def test_extract_applies_the_size_cap(tmp_path, monkeypatch):
    p = tmp_path / "a.smf"
    p.write_bytes(C.smf_file(20))                         # 20 x 244 = 4880 bytes
    monkeypatch.setenv("NESTSCOPE_MAX_BYTES", "4000")
    ds = Dataset(tmp_path / "ds", create=True)
    r = ds.extract(p)
    assert r.status == "error" and "more than the limit" in r.message and not ds.entries()


def test_extract_of_a_file_name_that_is_not_utf8(tmp_path, capsys):
    raw = os.path.join(os.fsencode(tmp_path), b"caf\xe9_smf113.rdw")
    with open(raw, "wb") as fh:
        fh.write(C.smf_file(20))
    root = tmp_path / "ds"
    assert main(["extract", os.fsdecode(raw), "--to", str(root)]) == 0      # argv as Python gives it (surrogates)
    out = capsys.readouterr().out
    assert "[added]" in out and "caf\\xe9_smf113.rdw" in out
    entries = Dataset(root).entries()
    assert len(entries) == 1 and entries[0]["samples"] == 20 and entries[0]["name"] == "caf\\xe9_smf113.rdw"
    json.dumps(entries[0], ensure_ascii=False).encode("utf-8")              # printable text, no surrogates
