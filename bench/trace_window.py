"""Where the window's time goes on an open: bench_window.py run with timestamps of its steps (issue 23).

Runs ``bench/bench_window.py`` of the checkout ROOT (its arguments after ``--``) with the window's GUI-thread
methods (showing a view, the tree's roots, deeper levels and values, the table's rows, the timeline's frame) and
the read and engine steps (the first part's decode, the walk of the rest, the whole read, the part's view, add,
tree, window metrics, prepared levels, cache frames) wrapped: after the month's figures, one line per call of
over 3 ms: start and end (seconds from ``open_files``), length, the CPU seconds of its own thread
(``time.thread_time``) and thread; then the CPU seconds of each thread of the process (from /proc) from
``open_files`` to the end of the whole file's add (the GUI thread is "python", the pools' "Thread (pooled)").  Calls on the engine's second thread
show beside those of the job's own thread (two threads: two lines at once).

    python bench/trace_window.py ROOT -- --cold --no-samples --keep /tmp/nestscope-bench-exports/month.smf
"""

from __future__ import annotations

import os
import sys
import threading
import time

ROOT = os.path.abspath(sys.argv[1])
ARGS = sys.argv[sys.argv.index("--") + 1:] if "--" in sys.argv else []
sys.path.insert(0, ROOT)
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
CALLS: list[tuple[float, float, str, str, float]] = []     # start, end, label, thread, thread CPU s
SELECTED: list[float] = []      # when bench_window first selected a node itself (the open is over by then)


def wrap(owner, name: str) -> None:
    real = getattr(owner, name)
    label = f"{getattr(owner, '__name__', owner)}.{name}".replace("app.", "")

    def timed(*a, **k):
        t, c = time.perf_counter(), time.thread_time()
        try:
            return real(*a, **k)
        finally:
            CALLS.append((t, time.perf_counter(), label, threading.current_thread().name, time.thread_time() - c))
    setattr(owner, name, timed)


def _gc_timer() -> None:
    """Every garbage collection of generation 1 or 2 as a call ("gc.collect(gen)") on the thread that ran it."""
    import gc

    started: list[float] = []

    def cb(phase: str, info: dict) -> None:
        if phase == "start":
            started.append(time.perf_counter())
        elif started:
            t = started.pop()
            if info.get("generation", 0) >= 1:
                CALLS.append((t, time.perf_counter(), f"gc.collect({info['generation']})",
                              threading.current_thread().name, float("nan")))
    gc.callbacks.append(cb)


TASKS: list[dict[int, tuple[str, float]]] = []    # CPU s of each thread of the process (by its id)


def _tasks() -> dict[int, tuple[str, float]]:
    out = {}
    tick = os.sysconf("SC_CLK_TCK")
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as f:
                raw = f.read()
        except OSError:
            continue
        name = raw[raw.index("(") + 1:raw.rindex(")")]
        fields = raw[raw.rindex(")") + 2:].split()
        out[int(tid)] = (name, (int(fields[11]) + int(fields[12])) / tick)
    return out


def main() -> None:
    _gc_timer()
    import app.ui  # noqa: F401  (before Qt, as the window's own start)
    from app.analysis import reading
    from app.cache import store, writer
    from app.formats import pages
    from app.engine import workspace
    from app.ui import main_window, progressive, table_model, timeline, tree_panel

    for name in ("_apply", "_show_view", "_show_health"):
        wrap(main_window.MainWindow, name)
    for name in ("set_roots", "add_deeper", "set_values"):
        wrap(tree_panel.TreePanel, name)
    select = tree_panel.TreePanel.select_keys

    def select_keys(self, *a, **k):
        if sys._getframe(1).f_code.co_filename.endswith("bench_window.py"):
            SELECTED.append(time.perf_counter())
        return select(self, *a, **k)
    tree_panel.TreePanel.select_keys = select_keys
    wrap(table_model.IntervalTableModel, "set_frame")
    wrap(timeline.TimelineView, "set_frame")
    for owner, name in ((progressive, "begin"), (progressive.Begun, "walk"), (progressive, "part_view"),
                        (reading, "read_one"), (store.Cache, "store_frames"), (store.Cache, "load_frames")):
        wrap(owner, name)
    for name in ("add_all", "tree", "window_metrics", "_window_frame", "prepare_levels", "prepare_cpus"):
        wrap(workspace.Workspace, name)
    # hashing and the cache's writes, wherever they run (none is expected before idle in a cold open: the content
    # digest only when a file of the same size is open, the writes held until the window is idle)
    for owner, name in ((reading, "file_digest"), (pages, "hash_into"), (writer._Write, "run")):
        wrap(owner, name)
    sys.argv = [os.path.join(ROOT, "bench", "bench_window.py"), *ARGS]
    import bench.bench_window as bw

    measure = bw.measure
    opened = main_window.MainWindow.open_files

    def traced(app, label, paths):
        CALLS.clear()
        SELECTED.clear()
        t0 = []

        def open_files(self, p):
            t0.append(time.perf_counter())
            TASKS.clear()
            TASKS.append(_tasks())
            return opened(self, p)
        real_add = workspace.Workspace.add_all

        def add_all(self, *a, **k):     # the whole file's add (the window's Workspace, not the part's own)
            out = real_add(self, *a, **k)
            if t0 and self.cache is not False and len(TASKS) < 2:
                TASKS.append(_tasks())
            return out
        workspace.Workspace.add_all = add_all       # before the window is made (bench_window binds it then)
        main_window.MainWindow.open_files = open_files
        try:
            measure(app, label, paths)
        finally:
            main_window.MainWindow.open_files = opened
            workspace.Workspace.add_all = real_add
        if not t0:
            return
        end = SELECTED[0] if SELECTED else float("inf")
        hashed = [c for c in CALLS if c[2].endswith(("file_digest", "hash_into")) and t0[0] <= c[0] < end]
        writes = [c for c in CALLS if c[2].endswith("_Write.run") and t0[0] <= c[0] < end]
        print(f"\n--- {label}: hashing before the first selection: {len(hashed)} calls, "
              f"{sum(e - t for t, e, *_ in hashed):.3f} s; cache entry writes: {len(writes)}, "
              f"{sum(e - t for t, e, *_ in writes):.3f} s, the first at "
              f"{(min(t for t, *_ in writes) - t0[0]) if writes else float('nan'):.3f} s")
        print(f"\n--- {label}: calls over 3 ms until the script's first selection (s from open_files: start, end, "
              f"length, thread)")
        for t, e, lab, th, cpu in sorted(CALLS):
            if t0[0] <= t < end and e - t > 0.003:
                print(f"{t - t0[0]:8.3f} {e - t0[0]:8.3f} {e - t:7.3f} {cpu:6.3f} CPU  {th[:16]:16s} {lab}")
        if len(TASKS) >= 2:
            print(f"\n--- {label}: CPU s of each thread (live at the end) from open_files to the end of the whole "
                  f"file's add (threads ended before it: their calls above)")
            first, last = TASKS[0], TASKS[-1]
            for tid, (name, c) in sorted(last.items(), key=lambda kv: -(kv[1][1] - first.get(kv[0], ("", 0.0))[1])):
                d = c - first.get(tid, ("", 0.0))[1]
                if d > 0.005:
                    print(f"  {name:20s} {d:6.3f}")
    bw.measure = traced
    bw.main()


if __name__ == "__main__":
    main()
