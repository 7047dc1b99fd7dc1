"""Where a cold comparison deck's time goes (issue 23): ``nestscope export --before --after .pptx`` run in this
process with its steps timed and every thread's CPU sampled.

Prints one line per wrapped call of over 3 ms (start and end in seconds from the process start, length, the
calling thread's CPU seconds in it, thread),
then a timeline of 100 ms slots: each thread's CPU share in the slot (from ``/proc/self/task/*/stat``, 10 ms
ticks) and the idle share of the machine's cores (2 cores: 200 % minus the process's use).

    PYTHONPATH=$PWD python bench/trace_deck.py [--cache DIR] [--writers] -- export --before B --after A --hours 08-17 \
        --days mon-fri --out /tmp/x.pptx

``--writers``: the deck's writer steps timed too (their modules then imported by the trace before the command
runs, so the imports' timing is not the command's).
``--cache DIR``: the workspace cache (emptied first: a cold run); without it a new temporary one.
Also prints the garbage collector's passes per generation (count, time, the longest), from the trace's start.
``--again N``: then the deck written N times more in this process from the same request, its writers' thread CPU
(min and median): the writers alone, little moved by the machine's load.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import threading
import time

T0 = time.perf_counter()
CALLS: list[tuple[float, float, str, str, float]] = []     # start, end, label, thread, the thread's CPU seconds
TICK = os.sysconf("SC_CLK_TCK")


def wrap(owner, name: str, label: str | None = None) -> None:
    real = getattr(owner, name)
    label = label or f"{getattr(owner, '__name__', owner)}.{name}".replace("app.", "")

    def timed(*a, **k):
        t, c = time.perf_counter(), time.thread_time()
        try:
            return real(*a, **k)
        finally:
            CALLS.append((t, time.perf_counter(), label, threading.current_thread().name, time.thread_time() - c))
    setattr(owner, name, timed)


def _task_cpu() -> dict[int, float]:
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/stat") as fh:
                f = fh.read().rsplit(")", 1)[1].split()
            out[int(tid)] = (int(f[11]) + int(f[12])) / TICK
        except (OSError, IndexError, ValueError):
            pass
    return out


GC: list[tuple[float, float, int, str]] = []        # each garbage collection: start, end, generation, thread
_GC_START: dict[int, float] = {}


def _gc_timed(phase: str, info: dict) -> None:
    me = threading.get_ident()
    if phase == "start":
        _GC_START[me] = time.perf_counter()
    elif me in _GC_START:
        GC.append((_GC_START.pop(me), time.perf_counter(), info["generation"], threading.current_thread().name))


SLOTS: list[tuple[float, dict[int, float]]] = []
NAMES: dict[int, str] = {}
STOP = threading.Event()


def sampler() -> None:
    me = threading.get_native_id()
    while not STOP.is_set():
        SLOTS.append((time.perf_counter(), _task_cpu()))
        for th in threading.enumerate():
            if th.native_id and th.native_id != me:
                NAMES.setdefault(th.native_id, th.name)
        STOP.wait(0.1)


def main() -> int:
    args = sys.argv[1:]
    cache_dir = None
    if "--cache" in args:
        i = args.index("--cache")
        cache_dir = args[i + 1]
        del args[i:i + 2]
    writers = "--writers" in args[:args.index("--")] if "--" in args else False
    again = 0
    if "--again" in args:
        i = args.index("--again")
        again = int(args[i + 1])
        del args[i:i + 2]
    argv = args[args.index("--") + 1:] if "--" in args else args
    own = cache_dir is None          # a temporary cache of its own: removed at the end
    cache_dir = cache_dir or tempfile.mkdtemp(prefix="trace-deck-cache-")
    shutil.rmtree(cache_dir, ignore_errors=True)
    os.environ["NESTSCOPE_CACHE_DIR"] = cache_dir
    th = threading.Thread(target=sampler, name="trace-sampler", daemon=True)
    th.start()
    import gc

    gc.callbacks.append(_gc_timed)
    import app.formats
    from app.analysis import comparison, request, workspace
    from app.cache import store
    from app.engine import compare, workspace as engine_ws

    import app.cli

    wrap(app.formats, "read_file", "decode")
    wrap(store.Cache, "_write_entry", "cache write")
    wrap(workspace, "make_workspace", "make_workspace")
    wrap(comparison, "make_workspace", "make_workspace (side)")
    wrap(request, "make_workspace", "make_workspace (export)")
    wrap(engine_ws.Workspace, "add_all", "Workspace.add_all")
    wrap(compare, "compare", "compare")
    wrap(request, "build_comparison", "build_comparison")
    import app.analysis

    wrap(app.analysis, "plan_export", "plan_export")
    import app.export as ex

    wrap(ex, "export", "export (writers)")
    from app.export import provenance

    for name in ("hash_ahead", "file_sha256"):
        if hasattr(provenance, name):
            wrap(provenance, name, name)
    import app.commands.export as export_command     # imported by the command anyway (app.export's writers are not)
    if writers:
        from app.export import chart_data, pptx as pptx_mod, pptx_compare, pptx_parts

    # --writers: the deck's writers step by step (their modules then imported here, by the trace, not on the
    # command's import thread: the imports' own timing is not the command's)
    for owner, names in ((pptx_compare, ("side_changes", "_summary_slide", "_table_slides", "_waterfall_slide",
                                         "_overlay_slides", "_config_slide", "summary_slides", "chart_deck",
                                         "caveats")),
                         (pptx_mod, ("provenance",)), (pptx_parts.Deck, ("save", "__init__")),
                         # each chart: python-pptx's part from the light XML, and that XML (points left out) made
                         (pptx_parts, ("add_xy_chart",)), (chart_data.TextXyChartData, ("light_xml",))) \
            if writers else ():
        for name in names:
            if hasattr(owner, name):
                wrap(owner, name, f"  {name}")
    if hasattr(export_command, "_charts_ahead"):       # the before side's chart data made ahead on its thread
        wrap(export_command, "_charts_ahead", "charts ahead (side)")
    from app.export import story

    if hasattr(story, "prepare_side"):       # then its configuration changes, CPUs per class, coverage caveats
        wrap(story, "prepare_side", "  story ahead (side)")
    seen: dict = {}
    if again:          # the request the deck is written from, to write it again
        from app.export import pptx as deck_mod

        real_write = deck_mod.write_pptx

        def keep(request, path, steps):
            seen["request"] = request
            return real_write(request, path, steps)
        deck_mod.write_pptx = keep
    t_import = time.perf_counter()
    code = app.cli.main(argv)
    t_main = time.perf_counter()
    from app.cache import writer

    writer._finish_writes()
    t_end = time.perf_counter()
    STOP.set()
    th.join()
    print(f"imports for the trace {t_import - T0:.2f} s; main {t_main - t_import:.2f} s (ends {t_main - T0:.2f}); "
          f"writes finished {t_end - T0:.2f} s; exit {code}")
    print(f"process CPU {sum(os.times()[:2]):.2f} s")
    # the garbage collector's passes (from the trace's start; the command's export sets its own threshold and
    # freezes the imports: app.commands.export.few_collections)
    for gen in range(3):
        runs = [(t, e, th_name) for t, e, g, th_name in GC if g == gen]
        if runs:
            big = max(runs, key=lambda r: r[1] - r[0])
            print(f"gc generation {gen}: {len(runs)} passes, {sum(e - t for t, e, _ in runs) * 1000:.0f} ms; longest "
                  f"{(big[1] - big[0]) * 1000:.0f} ms at {big[0] - T0:.2f} s ({big[2]})")
    print("  start     end   wall  thread-CPU  step                         thread")
    for t, e, label, thread, cpu in sorted(CALLS):
        if e - t > 0.003:
            print(f"{t - T0:7.2f} {e - T0:7.2f} {e - t:6.2f}  {cpu:10.2f}  {label:28s} {thread}")
    tids = sorted({tid for _, d in SLOTS for tid in d})
    prev = SLOTS[0][1]
    tot = {tid: 0.0 for tid in tids}
    last = {tid: max(d[tid] for _, d in SLOTS if tid in d) for tid in tids}
    first = {tid: min(d[tid] for _, d in SLOTS if tid in d) for tid in tids}
    cols = [tid for tid in tids if last[tid] - first[tid] >= 0.05]
    print("slot(s)  " + " ".join(f"{NAMES.get(t, str(t))[-14:]:>14s}" for t in cols) + "   idle%")
    for (t, d), (t_prev, _) in zip(SLOTS[1:], SLOTS[:-1]):
        dt = t - t_prev
        use = {tid: max(0.0, d[tid] - prev[tid]) if tid in d and tid in prev else 0.0 for tid in tids}
        for tid in tids:
            tot[tid] += use[tid]
        prev = d
        busy = sum(use.values()) / dt * 100
        print(f"{t - T0:6.2f}  " + " ".join(f"{use[tid] / dt * 100:13.0f}%" for tid in cols)
              + f"  {max(0.0, 200 - busy):5.0f}")
    if own:
        shutil.rmtree(cache_dir, ignore_errors=True)
    if again and "request" in seen:
        _write_again(real_write, seen["request"], again)
    print("CPU per thread (seen by the sampler): " + ", ".join(f"{NAMES.get(t, str(t))} {last[t] - first[t]:.2f}"
                                                        for t in tids if last[t] - first[t] >= 0.01))
    return code


def _write_again(write, request, n: int) -> None:
    """``--again N``: the deck written N times more from the same request in this process (the sides' metrics,
    timelines and frames then made already, as the export's shared shift rows), this thread's CPU each time: the
    writers' own work (python-pptx, the charts' XML and workbooks, the zip) without the decode's and the engine's,
    and little of the machine's load (thread CPU, min of N)."""
    from app.engine.shift import shared_shift_rows

    out = os.path.join(tempfile.mkdtemp(prefix="trace-deck-again-"), "again.pptx")
    times = []
    for _ in range(n):
        with shared_shift_rows():
            c = time.thread_time()
            write(request, out, lambda fraction, text: None)
            times.append(time.thread_time() - c)
    shutil.rmtree(os.path.dirname(out), ignore_errors=True)
    times.sort()
    print(f"deck written again {n}x: thread CPU min {times[0]:.3f} s, median {times[len(times) // 2]:.3f} s")


if __name__ == "__main__":
    raise SystemExit(main())
