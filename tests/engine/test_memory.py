"""app/memory.py: freed memory goes back to the system where the platform allows (issue 11).

The heap test runs in a fresh interpreter: in the test process, memory freed by earlier tests is reused, so how
much a new allocation grows the resident size depends on what ran before."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from app import memory

ROOT = Path(__file__).resolve().parents[2]

CHILD = r"""
import json, numpy as np
from app import memory
before = memory.rss_mb()
# 200,000 small arrays (~200 bytes each) live in the C heap, not in separate mappings; freed, their pages stay
# with the allocator until malloc_trim hands them back
junk = [np.ones(20) for _ in range(200_000)]
grown = memory.rss_mb()
del junk
trimmed = memory.release()
after = memory.rss_mb()
print(json.dumps({"before": before, "grown": grown, "after": after, "trimmed": trimmed,
                  "glibc": bool(memory._glibc())}))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and glibc's malloc_trim are Linux's")
def test_release_returns_freed_heap_pages_on_linux():
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, cwd=ROOT, check=True,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert r["before"] > 10                              # a Python process with numpy: well over 10 MB resident
    assert r["grown"] > r["before"] + 20, r              # 200,000 arrays of ~200 bytes: ~60 MB with headers
    if r["glibc"]:
        assert r["after"] < r["grown"] - 20, r           # most of it handed back


def test_release_never_fails_and_rss_is_a_number_or_none():
    assert isinstance(memory.release(), bool)
    r = memory.rss_mb()
    assert r is None or r > 0


def test_release_collects_on_a_worker_only_while_automatic_collection_is_on(monkeypatch):
    # a window turns automatic collection off (app/ui/gc_guard.py): an export's release() on a worker thread must
    # not collect then (a Qt destructor run there froze the window: the export dialog test hung on it); on the
    # main thread, or with automatic collection on (the CLI), it collects as before
    import gc
    import threading

    from app import memory

    calls: list[str] = []
    monkeypatch.setattr(gc, "collect", lambda *a: calls.append(threading.current_thread().name) or 0)

    def on_worker() -> None:
        t = threading.Thread(target=memory.release, name="worker")
        t.start()
        t.join()

    was = gc.isenabled()
    try:
        gc.disable()
        on_worker()
        assert calls == []
        memory.release()
        assert calls == [threading.main_thread().name]
        gc.enable()
        on_worker()
        assert calls[-1] == "worker"
    finally:
        (gc.enable if was else gc.disable)()


def test_release_collects_only_when_what_was_let_go_is_still_alive(monkeypatch):
    # a full collection walks every object of the process (0.5-1 s in a window's): after an XLSX sheet it runs
    # only when the written frame outlived its last name (a cycle holds it), never when reference counts freed it
    import gc
    import weakref

    from app import memory

    calls: list[int] = []
    monkeypatch.setattr(gc, "collect", lambda *a: calls.append(1) or 0)

    class Frame:
        pass

    freed = Frame()
    ref_freed = weakref.ref(freed)
    del freed                                   # no cycle: gone at once
    memory.release(gone=ref_freed)
    assert calls == []

    cyclic = Frame()
    cyclic.me = cyclic                          # a cycle: alive after its last name goes
    ref_cyclic = weakref.ref(cyclic)
    del cyclic
    memory.release(gone=ref_cyclic)
    assert calls == [1]

    memory.release(collect=False, gone=ref_cyclic)   # told not to collect: never
    assert calls == [1]
