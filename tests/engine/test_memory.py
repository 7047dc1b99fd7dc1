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
import ctypes, json
from app import memory
lib = memory._glibc()
before = memory.rss_mb()
# 300,000 blocks of 200 bytes straight from the C heap (no numpy or Python allocator in between: how those reuse
# or cache small blocks varies between versions), each written so its page is resident; then one more block
# pins the top of the heap, so freeing the 300,000 leaves a ~60 MB free hole in the middle that free() alone
# never returns: only malloc_trim hands those pages back
malloc, free = lib.malloc, lib.free
malloc.restype, malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
free.restype, free.argtypes = None, [ctypes.c_void_p]
blocks = [malloc(200) for _ in range(300_000)]
for b in blocks:
    ctypes.memset(b, 1, 200)
pin = malloc(200)
grown = memory.rss_mb()
for b in blocks:
    free(b)
freed = memory.rss_mb()
del blocks
trimmed = memory.release()
after = memory.rss_mb()
free(pin)
print(json.dumps({"before": before, "grown": grown, "freed": freed, "after": after, "trimmed": trimmed}))
"""


@pytest.mark.skipif(not sys.platform.startswith("linux") or not memory._glibc(),
                    reason="/proc and glibc's malloc_trim are Linux's")
def test_release_returns_freed_heap_pages_on_linux():
    out = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, cwd=ROOT, check=True,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    r = json.loads(out.stdout.strip().splitlines()[-1])
    assert r["before"] > 10                              # a Python process: well over 10 MB resident
    assert r["grown"] > r["before"] + 50, r              # 300,000 x (200 + 8 header) bytes: ~60 MB written
    assert r["freed"] > r["grown"] - 5, r                # free() keeps the hole below the pinned top
    assert r["trimmed"] is True, r
    assert r["after"] < r["freed"] - 40, r               # malloc_trim returned most of the hole


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


def test_release_does_not_import_pyarrow():
    # release() empties Arrow's pool only when pyarrow is loaded: importing it there added ~70 MB resident to a
    # process that never used it (the heap test above saw release() grow the process instead of shrinking it)
    code = ("import sys; from app import memory; memory.release(); "
            "print('pyarrow' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.stdout.strip() == "False"
