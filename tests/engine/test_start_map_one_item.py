"""``parallel.start_map`` with one item starts it on a pool thread (issue 23): the workspace's records' UTC offsets
(``timezone.record_offsets``) are made beside its intervals, as its add meant, not after them (a single item used
to wait for the finishing call); ``parallel_map`` still computes a single item on the calling thread."""

from __future__ import annotations

import threading
import time

import pandas as pd
import pytest

from app.engine import Workspace
from app.engine import workspace as wsm
from app.engine.parallel import parallel_map, start_map

FILES = ["after_z16_ZOSA_smf113.rdw.gz", "after_z16_ZOSB_smf113.vbs.gz"]


def test_one_item_is_started_on_a_pool_thread(monkeypatch):
    monkeypatch.setenv("NESTSCOPE_THREADS", "2")
    ran = threading.Event()
    where: list[str] = []

    def item(x: int) -> int:
        where.append(threading.current_thread().name)
        ran.set()
        return x + 1
    done = start_map(item, [41])
    assert ran.wait(30)                 # before the finishing call: on the pool thread
    assert where[0].startswith("nestscope-engine")
    assert done() == [42] and len(where) == 1
    where.clear()
    assert parallel_map(item, [1]) == [2]
    assert where == [threading.current_thread().name]     # parallel_map's own item: on the calling thread
    assert start_map(item, [])() == []


def test_one_item_with_one_thread_waits_for_the_finishing_call(monkeypatch):
    monkeypatch.setenv("NESTSCOPE_THREADS", "1")
    where: list[str] = []
    done = start_map(lambda x: where.append(threading.current_thread().name) or x, [7])
    time.sleep(0.05)
    assert where == []
    assert done() == [7] and where == [threading.current_thread().name]


@pytest.fixture(scope="module")
def results(sample_result):
    return [sample_result(f) for f in FILES]      # decoded once per test process (tests/conftest.py)


def test_the_records_offsets_are_made_beside_the_intervals(results, monkeypatch):
    """The add's compute_intervals runs on the calling thread while record_offsets runs on the pool thread: the
    offsets start before the intervals end; the same intervals as with one thread."""
    monkeypatch.setenv("NESTSCOPE_THREADS", "2")
    spans: dict[str, tuple[float, float, str]] = {}
    for name in ("compute_intervals", "record_offsets"):
        real = getattr(wsm, name)

        def spy(*a, _real=real, _name=name, **k):
            t = time.perf_counter()
            out = _real(*a, **k)
            spans[_name] = (t, time.perf_counter(), threading.current_thread().name)
            return out
        monkeypatch.setattr(wsm, name, spy)
    ws = Workspace(cache=False)
    ws.add_all(results)
    me = threading.current_thread().name
    assert spans["compute_intervals"][2] == me
    assert spans["record_offsets"][2].startswith("nestscope-engine")
    assert spans["record_offsets"][0] < spans["compute_intervals"][1]
    monkeypatch.setenv("NESTSCOPE_THREADS", "1")
    one = Workspace(cache=False)
    one.add_all(results)
    pd.testing.assert_frame_equal(ws.intervals, one.intervals, check_exact=True)
    assert [f.code for f in ws.findings] == [f.code for f in one.findings]
