"""The dataset lock (issue 24): concurrent extracts of overlapping data add it once; a busy lock names its holder;
a stale lock file of a process that no longer runs is removed with a message naming its pid."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import socket
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest

from _fleet_helpers import ROOT, SAMPLES, assert_same
from app.dataset import Dataset
from app.dataset.lock import LOCK_NAME, DatasetLock, DatasetLocked
from app.dataset.query import QuerySpec, run_query
from app.engine.catalog import load_formula_sets
from app.engine.metrics import metric_ids

IDS = metric_ids(load_formula_sets())


def test_busy_lock_names_its_holder_and_times_out(tmp_path):
    held = DatasetLock(tmp_path, "nestscope extract")
    said: list[str] = []
    with held:
        note = json.loads((tmp_path / LOCK_NAME).read_bytes().split(b"\0", 1)[0])
        assert note["pid"] == os.getpid() and note["command"] == "nestscope extract"
        other = DatasetLock(tmp_path, "nestscope dataset", timeout=0.5, say=said.append)
        t = time.monotonic()
        with pytest.raises(DatasetLocked) as exc:
            other.acquire()
        assert time.monotonic() - t >= 0.5
        assert f"locked by process {os.getpid()} on {socket.gethostname()} (nestscope extract" in str(exc.value)
        assert said == [f"{tmp_path}: waiting for process {os.getpid()} on {socket.gethostname()} (nestscope "
                        f"extract, since {note['since']}), which is writing to the dataset"]
    with DatasetLock(tmp_path, timeout=0.0):            # released: had at once
        pass


def test_lock_of_a_killed_process_is_free(tmp_path):
    # the holder is killed while it holds the lock: the operating system's lock goes with it
    code = ("import sys, time; sys.path.insert(0, %r); from app.dataset.lock import DatasetLock; "
            "DatasetLock(sys.argv[1]).acquire(); print('held', flush=True); time.sleep(60)" % str(ROOT))
    p = subprocess.Popen([sys.executable, "-c", code, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        assert p.stdout.readline().strip() == "held"
        with pytest.raises(DatasetLocked, match=f"process {p.pid} "):
            DatasetLock(tmp_path, timeout=0.2).acquire()
    finally:
        p.kill()
        p.wait()
    with DatasetLock(tmp_path, timeout=2.0):
        pass


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def test_pid_file_fallback_stale_and_live(tmp_path, monkeypatch):
    # a file system without OS locks: the exclusively created pid file; one of a process that ended is stale
    monkeypatch.setattr(DatasetLock, "_try_os", lambda self, fd: None)
    pidfile = tmp_path / (LOCK_NAME + ".pid")
    dead = _dead_pid()
    pidfile.write_text(json.dumps({"pid": dead, "host": socket.gethostname(), "since": "2026-11-26T10:00:00Z",
                                   "command": "nestscope extract"}))
    said: list[str] = []
    with DatasetLock(tmp_path, timeout=0.0, say=said.append):
        assert json.loads(pidfile.read_text())["pid"] == os.getpid()
    assert not pidfile.exists()
    assert said == [f"{tmp_path}: removed a stale lock {pidfile.name} of process {dead} on {socket.gethostname()} "
                    "(nestscope extract, since 2026-11-26T10:00:00Z): that process no longer runs"]
    # a live holder (this test's parent process) is waited for, then named with the file to remove
    pidfile.write_text(json.dumps({"pid": os.getppid(), "host": socket.gethostname(), "since": "x",
                                   "command": "nestscope extract"}))
    with pytest.raises(DatasetLocked) as exc:
        DatasetLock(tmp_path, timeout=0.3).acquire()
    assert f"process {os.getppid()} " in str(exc.value) and f"remove {pidfile}" in str(exc.value)


def _extract(root: str, path: str, go, out) -> None:
    go.wait()
    out.put(Dataset(root).extract(path).status)


def _records(data: bytes) -> list[int]:
    out, o = [], 0
    while o < len(data):
        out.append(o)
        o += int.from_bytes(data[o:o + 2], "big")
    return out


@pytest.mark.parametrize("what", ["same file", "overlapping dumps"])
def test_two_processes_extracting_at_once_add_the_data_once(tmp_path, what):
    import gzip

    data = gzip.decompress(SAMPLES[5].read_bytes())         # z15 ZOSB, subtype 1, 1536 records
    whole = tmp_path / "whole.rdw"
    whole.write_bytes(data)
    offs = _records(data)
    if what == "same file":
        a = b = whole
    else:                                                   # records 0-60 % and 40-100 %
        a, b = tmp_path / "a.rdw", tmp_path / "b.rdw"
        a.write_bytes(data[:offs[int(len(offs) * 0.6)]])
        b.write_bytes(data[offs[int(len(offs) * 0.4)]:])
    ref = Dataset(tmp_path / "ref", create=True)
    assert ref.extract(whole).status == "added"
    want = {by: run_query(ref, QuerySpec(by=by)) for by in ("cpu", "lpar")}
    ctx = mp.get_context("spawn")
    go = ctx.Event()
    root = str(tmp_path / "ds")
    Dataset(root, create=True)
    out = ctx.Queue()
    procs = [ctx.Process(target=_extract, args=(root, str(p), go, out)) for p in (a, b)]
    for p in procs:
        p.start()
    time.sleep(0.5)
    go.set()                                    # both start their extract at once
    got = sorted(out.get(timeout=600) for _ in procs)
    for p in procs:
        p.join(60)
    assert got == (["added", "present"] if what == "same file" else ["added", "added"])
    ds = Dataset(root)
    for by in ("cpu", "lpar"):
        assert_same(run_query(ds, QuerySpec(by=by)), want[by], by, IDS)
    iv = pd.read_parquet(ds.root / "intervals")
    assert len(iv) == 1536 and not iv.duplicated(["lpar", "cpu", "class", "t_end"]).any()
    s = pd.read_parquet(ds.root / "samples")
    assert len(s) == 1536 and int(np.sum(s["time"] == s["time"].max())) == 8
