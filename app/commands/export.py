"""``nestscope export FILE... --out PATH [--by LEVEL] [--from T --to T] [--hours H --days D] [comparison]``

Writes CSV, XLSX or PPTX (the format from the extension of ``--out``) through
:func:`app.export.export`, the code path the window uses.  With ``--before FILE... --after
FILE...`` a comparison is added (Compare sheet, comparison slides and the CPI waterfall; a CSV
then holds the comparison table); without ``FILE...`` the export covers the before and after
files.

PNG and SVG (``--out FILE.png|.svg [--size WxH] [--metric NAME]``) are pictures of the window's
plots: the real window is built offscreen (:func:`app.commands.snapshot.open_window`), the files
are opened, the options select what the window would show, and the picture is saved with
:func:`app.ui.plot_export.save_picture`, the code of the window's File > Export and right-click >
Export picture:

* without a comparison: the Timelines panel (node legend, every plot with data, time axis and
  overview) of the node the options name: ``--lpar NAME`` (repeatable; default the first LPAR with
  counters) at the level ``--by`` (``cec``: the CEC with its LPARs' stacked busy; ``lpar`` or
  ``interval``: the LPARs; ``class`` / ``cpu``: their processor classes / CPUs).  ``--from``/``--to``
  zoom the plots to that window (the overview below shows it in the whole range).  ``--metric CPI``
  (L1MP, RNI, sourcing, LPARCPU, MT, cec) saves that one plot.  The timelines show every interval:
  ``--hours``/``--days`` are refused here (they apply to comparison pictures and to CSV/XLSX/PPTX).
* with ``--before FILE... --after FILE...``: the Compare tab's charts, as a slide wants them: the CPI
  waterfall with its numbers beside it and both sides' CPI timelines overlaid on a relative axis
  (before dashed, after solid).  ``--pair NAME`` chooses the pair whose waterfall is drawn (an LPAR, or
  with ``--compare-by class`` "LPAR CLASS"; default the first pair, as the Compare tab's pair box).
  The picture holds the charts, their titles and legends and the numbers, not the tab's combo boxes.
  ``--metric waterfall`` saves the waterfall alone, ``--metric NAME``
  (CPI, L1MP, Est_Finite_CPI, RNI, LPARCPU...) the overlaid timelines of that metric alone.  A side is
  the LPARs of its files (``--before-lpar``/``--after-lpar`` pick some) over the time those files
  cover, or ``--before-from``/``--before-to``...; ``--hours``/``--days`` (and the per-side ones) filter
  the shift; ``--compare-by class`` pairs per processor class.

Every file is written to a temporary name in the target folder and renamed at the end, never over
an input file.  Exit codes: 0 written, 2 usage error (bad option, bad extension or size, unwritable
target, target is an input file, unknown LPAR or metric, nothing in the window), 3 nothing readable.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import os
import sys
import time

from app.commands.compare import (EXIT_NOTHING, EXIT_OK, EXIT_USAGE, _err, add_selection_options, add_shift_options,
                                  comparison_request, say)
from app.commands.report import _time
from app.fileio import same_file
from app.textsafe import display_text

LEVELS = ("interval", "cpu", "class", "lpar", "cec", "pool")


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register the ``export`` subcommand."""
    p = sub.add_parser("export", help="write CSV, Excel (.xlsx), PowerPoint (.pptx) or PNG/SVG pictures of the plots",
                       description="Export metrics (and a before/after comparison) to .csv, .xlsx or .pptx, or a "
                                   "picture of the plots to .png or .svg (the window's Timelines panel, or with "
                                   "--before/--after the Compare charts: CPI waterfall and overlaid timelines, "
                                   "rendered offscreen); the format comes from the extension of --out. Times are "
                                   "UTC.")
    p.add_argument("files", nargs="*", metavar="FILE", help="SMF or MONWRITE file (gzip allowed)")
    p.add_argument("--out", required=True, metavar="PATH", help="target file: .csv, .xlsx, .pptx, .png or .svg")
    p.add_argument("--by", choices=LEVELS, default="lpar",
                   help="level of the CSV rows and of the slide summary table (default lpar); of a picture: the "
                        "nodes whose timelines are drawn (cec, lpar, class or cpu)")
    p.add_argument("--size", metavar="WxH",
                   help="picture size in pixels (.png/.svg; default 1600x900)")
    p.add_argument("--metric", metavar="NAME",
                   help="picture of one plot: CPI, L1MP, RNI, sourcing, LPARCPU, MT or cec; with a comparison "
                        "'waterfall' or an overlaid metric (CPI, L1MP, Est_Finite_CPI, RNI, LPARCPU...); default the "
                        "whole timeline panel / the comparison charts")
    p.add_argument("--from", dest="start", type=_time, metavar="T", help="only intervals ending after T (UTC)")
    p.add_argument("--to", dest="end", type=_time, metavar="T", help="only intervals ending at or before T (UTC)")
    p.add_argument("--lpar", action="append", metavar="NAME",
                   help="only this LPAR (repeatable; default all; of a picture: the first LPAR)")
    p.add_argument("--pair", metavar="NAME",
                   help="comparison picture: the pair whose CPI waterfall is drawn, an LPAR name (with --compare-by "
                        "class 'LPAR CLASS', e.g. 'ZOSA zIIP'); default the first pair")
    add_shift_options(p)
    p.add_argument("--title", default="CPU MF analysis",
                   help="title of the deck / workbook / SVG picture (a comparison deck's default: '<LPARs>: <before "
                        "generation> -> <after generation>')")
    p.add_argument("--also-shift", metavar="HH-HH",
                   help="deck (.pptx): set each side's shift against these hours too, e.g. prime shift against the "
                        "night with --hours 08-17 --also-shift 22-06 (the days of --days apply to both); one table "
                        "slide per side")
    p.add_argument("--profile", choices=("hour", "weekday", "hour-weekday"),
                   help="add the hour-of-day / day-of-week profile of the --by level's nodes (cec, lpar or class; "
                        "other levels: their classes): a Profile sheet (.xlsx) or slides with hour x day-of-week "
                        "heat maps of CPI, RNI, L1MP and LPARCPU (.pptx)")
    p.add_argument("--cpu-sheet", action="store_true",
                   help="workbook (.xlsx): add the 'CPU intervals' sheet, one row per logical CPU and interval (a "
                        "month of one CEC: 368,640 rows; left out by default, the About sheet says so)")
    p.add_argument("--formulas", metavar="FILE", help="JSON file overriding/adding formulas (see docs)")
    add_selection_options(p, required=False)
    from app.commands.report import add_keep_implausible

    add_keep_implausible(p)
    return p


def run(args: argparse.Namespace) -> int:
    """Read, compute and write the export; returns the exit code."""
    from app.export import IMAGE_FORMATS, ExportError, export, format_of

    if args.cpu_sheet and not args.out.lower().endswith(".xlsx"):
        _err("export", f"error: --cpu-sheet adds a sheet to a workbook (.xlsx), not to {args.out}")
        return EXIT_USAGE
    if os.path.splitext(args.out)[1].lower() in IMAGE_FORMATS:
        if getattr(args, "profile", None):
            _err("export", f"error: --profile adds a sheet (.xlsx) or slides (.pptx), not {args.out}")
            return EXIT_USAGE
        return run_picture(args)
    for opt, value in (("--size", args.size), ("--metric", args.metric), ("--pair", args.pair)):
        if value is not None:
            _err("export", f"error: {opt} is for pictures (--out FILE.png or FILE.svg), not {args.out}")
            return EXIT_USAGE
    try:
        format_of(args.out)
    except ExportError as exc:
        _err("export", f"error: {exc}")
        return EXIT_USAGE
    if bool(args.before) != bool(args.after):
        _err("export", "error: a comparison needs both --before FILE... and --after FILE...")
        return EXIT_USAGE
    if not args.files and not args.before:
        _err("export", "error: give FILE... or --before FILE... --after FILE...")
        return EXIT_USAGE
    from app.analysis import ExportSpec, plan_export
    from app.export import import_writers_ahead
    from app.export.provenance import hash_ahead

    # a deck: python-pptx and the deck's writers imported on a thread of their own while the sides are
    # read (their decode mostly without the GIL), not on this thread when the writers start (issue 23)
    if args.out.lower().endswith(".pptx"):
        import_writers_ahead("pptx")

    # the files' SHA-256 for the provenance on a thread of its own from now on: beside the reads, while a read
    # waits for its cache entry, while the levels are computed (not on the export's thread at its end)
    hash_ahead([*args.files, *(args.before or []), *(args.after or [])])

    spec = ExportSpec(list(args.files), by=args.by, start=args.start, end=args.end, lpars=args.lpar,
                      hours=args.hours, days=args.days, also_hours=args.also_shift, title=args.title,
                      formulas=args.formulas, keep_implausible=getattr(args, "keep_implausible", False),
                      comparison=comparison_request(args, args.compare_by or "lpar") if args.before else None,
                      deck=args.out.lower().endswith(".pptx"), target=args.out,
                      profile=args.profile, tz=getattr(args, "tz", None),
                      cpu_sheet=args.cpu_sheet)
    from app.engine.shift import shared_shift_rows

    # a deck: the shifted rows the comparison is computed from are the ones its export reads again (provenance,
    # pools, overlays); a workbook keeps them for its own export only (its peak memory)
    from app.cache import pause_writes, samples_not_kept

    # the files' samples are let go once their intervals are made (read back from the cache if ever needed): the
    # export's peak holds the intervals, not the samples beside them; a comparison's sides share reads, so there
    # each workspace keeps them for the next
    with few_collections(), shared_shift_rows() if spec.deck else contextlib.nullcontext(), \
            samples_not_kept() if spec.comparison is None else contextlib.nullcontext():
        # a comparison deck: its cache entries (a cold run's reads and intervals, about 0.6 CPU s of Arrow and
        # Parquet, half of it without the GIL) are held from the writer thread while both sides are decoded and
        # added on the two cores (issue 23: the cold deck); the before side's thread, its own work done, writes
        # those queued by then while this one still reads the after side and computes its intervals
        # (``before_idle``: :func:`_write_held`); the writer thread the rest once both sides' Workspaces are made
        # (``sides_ready``), beside the comparison and python-pptx's deck on this thread, and at exit this thread
        # helps with what is left (app.cache.writer.wait_for_writes).  Held until the deck's writers started, the
        # writes ended 0.01-0.27 s after the deck; let go for the writer thread as soon as the before side's
        # thread had made its chart data ahead, they raised the run's peak by about 45 MB (beside the after side's
        # intervals being made).  A lookup of a held entry still writes it first.
        pause = pause_writes() if spec.deck and spec.comparison is not None else None
        if spec.deck and spec.comparison is not None:
            # the before side's chart slides' data (series, chart XML and workbooks: plain bytes) made on its thread
            # once its levels are, while the after side is still read (issue 23); the deck takes them
            import dataclasses

            spec = dataclasses.replace(spec, comparison=dataclasses.replace(
                spec.comparison, before_ready=lambda sel: _charts_ahead(sel, getattr(args, "tz", None)),
                sides_ready=pause.release, before_idle=_write_held))
        try:
            plan = plan_export(spec)
        finally:
            if pause is not None:
                pause.release()
        say("export", plan.messages)
        if plan.request is None:
            return plan.code
        req, ws = plan.request, plan.request.workspace
        gc.freeze()         # the writers' modules, imported on their thread meanwhile
        try:
            res = export(req, args.out)
        except ExportError as exc:
            _err("export", f"error: {exc}")
            return EXIT_USAGE
    what = ", ".join(f"{v} {k}" for k, v in res.items.items())
    print(display_text(f"wrote {res.path} ({what})"), file=sys.stderr)
    from app.commands.report import left_out_line

    note = left_out_line(ws)
    if note:
        print(note, end="", file=sys.stderr)
    return EXIT_OK


@contextlib.contextmanager
def few_collections():
    """Inside: the cyclic garbage collector leaves the objects made so far out of its passes (``gc.freeze``: the
    imports' modules, classes and functions, alive until the process ends; with a second ``gc.freeze`` adding the writers'
    modules imported meanwhile and the sides' data: 93,000 objects on the cold deck of the two 30-day months) and
    runs its youngest generation every 20,000 new objects instead of 700.  A cold comparison deck made 260
    collections, three of them full passes (100-130 ms each) during the writers, and the interpreter's last one at
    exit another 100 ms: 0.3-0.45 CPU s in all.  Garbage in reference cycles made during the run is still
    collected, in fewer passes; refcounting frees everything else as before.  The threshold is set back at the end;
    the frozen objects stay frozen (the command's process ends: the collection at exit then skips them too; in a
    process that goes on, e.g. the tests', what was frozen is still freed by refcounting, only cycles among it wait
    for ``gc.unfreeze``)."""
    old = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(max(old[0], 20_000), old[1], old[2])
    try:
        yield
    finally:
        gc.set_threshold(*old)


def _write_held(busy) -> None:
    """A comparison deck's before side done (its read, intervals, metrics and chart data) while this thread still
    reads the after side or computes its intervals: the cache entries held so far (the before side's read and
    intervals, about 0.1 CPU s) written on that side's thread meanwhile, one at a time while ``busy()``, instead of
    on the writer thread once both sides are made (issue 23: a cold deck's last entries were written up to 0.16 s
    after the deck itself; a quiet machine's second core idle meanwhile)."""
    from app.cache.writer import write_while

    write_while(busy)


def _charts_ahead(sel, tz: str | None) -> None:
    """The chart slides' data of a comparison deck's side, made ahead (:func:`app.export.pptx_slides.prepare_charts`)
    with the time axis in the zone the export will use (``--tz``, else the workspace's default zone; a deck in
    another zone makes its charts itself); then the side's configuration changes, CPUs per class and coverage
    caveats (:func:`app.export.story.prepare_side`: the summary and configuration slides take them)."""
    from app.export import wait_imports_ahead

    wait_imports_ahead()            # (python-pptx imported on one thread at a time)
    from app.export.pptx_slides import prepare_charts
    from app.export.story import prepare_side

    ws = sel.workspace
    zone = tz or (ws.default_zone() if hasattr(ws, "default_zone") else ws.zones.default())
    prepare_charts(sel.metrics, ws, zone)
    prepare_side(sel)


# ------------------------------------------------------------------ pictures (.png / .svg)
PICTURE_SIZE = "1600x900"
WAIT_S = 300
# --metric of a timeline picture -> the timeline's plot id (metric ids, plot ids and short titles)
PLOT_OF = {"cpi": "cpi", "est_instr_cmplx_cpi": "cpi", "est_finite_cpi": "cpi", "l1mp": "l1mp", "rni": "rni",
           "relative_nest_intensity": "rni", "sourcing": "sourcing", "lparcpu": "lparcpu", "busy": "lparcpu",
           "mt": "mt", "mt_ipc_per_thread": "mt", "thread_density": "mt", "cec": "cec"}
WATERFALL = "waterfall"
OVERVIEW_TITLE = "Whole range (UTC)"
OVERVIEW_ZOOMED = "Whole range (UTC); the plots above show the shaded window"


def _norm(name: str) -> str:
    return "_".join(str(name).strip().lower().replace("%", " ").replace("-", " ").split())


def _picture_usage(args: argparse.Namespace, size_text: str) -> tuple[tuple[int, int] | None, str]:
    """Checks of a picture request that need no data: (size, "") or (None, the message)."""
    from app.analysis.selection import window_problem
    from app.engine.shift import ShiftError, make_shift
    from app.ui.plot_export import MAX_SIDE, MIN_SIDE, parse_size

    size = parse_size(size_text)
    if size is None:
        return None, f"--size {size_text!r}: expected WxH between {MIN_SIDE} and {MAX_SIDE} pixels, e.g. 1600x900"
    if bool(args.before) != bool(args.after):
        return None, "a comparison needs both --before FILE... and --after FILE..."
    if not args.files and not args.before:
        return None, "give FILE... or --before FILE... --after FILE..."
    if window_problem(args.start, args.end):
        return None, window_problem(args.start, args.end)
    if args.before:
        if args.lpar or args.start is not None or args.end is not None:
            return None, ("a comparison picture takes --before-lpar/--after-lpar and --before-from/--after-to..., "
                          "not --lpar/--from/--to")
        for side in ("before", "after"):
            problem = window_problem(getattr(args, f"{side}_from"), getattr(args, f"{side}_to"),
                                     (f"--{side}-from", f"--{side}-to"))
            if problem:
                return None, problem
            try:
                make_shift(getattr(args, f"{side}_hours") or args.hours, getattr(args, f"{side}_days") or args.days)
            except ShiftError as exc:
                return None, str(exc)
        if args.metric and _norm(args.metric) != WATERFALL and _overlay_metric(args.metric) is None:
            return None, (f"--metric {args.metric}: a comparison picture shows 'waterfall' or one of "
                          f"{', '.join(_overlay_names())}")
        if args.pair and args.metric and _norm(args.metric) != WATERFALL:
            return None, (f"--pair chooses the CPI waterfall's pair; --metric {args.metric} shows the overlaid "
                          "timelines only (leave out --metric, or use --metric waterfall)")
    else:
        if args.hours or args.days:
            return None, ("--hours/--days: the timelines show every interval; a shift filter applies to comparison "
                          "pictures (--before/--after) and to .csv/.xlsx/.pptx exports")
        if args.compare_by:
            return None, "--compare-by needs --before FILE... --after FILE..."
        if args.pair:
            return None, "--pair (the waterfall's pair) needs --before FILE... --after FILE..."
        if args.metric and _norm(args.metric) not in PLOT_OF:
            return None, (f"--metric {args.metric}: a timeline picture shows one of CPI, L1MP, RNI, sourcing, "
                          "LPARCPU, MT or cec")
    folder = os.path.dirname(os.path.abspath(args.out))
    if not os.path.isdir(folder):
        return None, f"{args.out}: folder {folder} does not exist"
    return size, ""


def _overlay_names() -> list[str]:
    from app.ui.compare_charts import OVERLAY_METRICS

    return list(OVERLAY_METRICS)


def _overlay_metric(name: str) -> str | None:
    want = _norm(name)
    return next((m for m in _overlay_names() if _norm(m) == want), None)


def run_picture(args: argparse.Namespace) -> int:
    """``export ... --out FILE.png|.svg``: a picture of the window's plots (see the module docstring)."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    size, problem = _picture_usage(args, args.size or PICTURE_SIZE)
    if size is None:
        _err("export", f"error: {problem}")
        return EXIT_USAGE
    paths = list(dict.fromkeys(list(args.files) + list(args.before or []) + list(args.after or [])))
    for p in paths:
        if same_file(args.out, p):
            _err("export", f"error: {args.out}: is an input file of this export; choose another name")
            return EXIT_USAGE
    present = []
    for p in paths:
        if os.path.exists(p):
            present.append(p)
        else:
            _err("export", f"{p}: no such file")
    if not present:
        _err("export", "nothing readable was found in the given files")
        return EXIT_NOTHING
    from app.commands.snapshot import open_window, teardown
    from app.engine import FormulaFileError

    try:
        qapp, window = open_window(present, size, args.formulas, getattr(args, "keep_implausible", False))
    except FormulaFileError as exc:
        _err("export", f"error: --formulas {exc}")
        return EXIT_USAGE
    try:
        return _picture(args, size, qapp, window, present)
    finally:
        teardown(qapp, window)


def _wait(qapp, window) -> None:
    """Spin the event loop until the window's reads, view jobs and comparison jobs have ended."""
    ctl = getattr(window, "compare", None)
    deadline = time.monotonic() + WAIT_S
    qapp.processEvents()
    while (window.busy() or window.loader.running_workers() or (ctl is not None and ctl.busy())) \
            and time.monotonic() < deadline:
        qapp.processEvents()
        time.sleep(0.01)
    for _ in range(3):
        qapp.processEvents()


def _is_result_of(result, path: str) -> bool:
    """``result`` (a read result in the window) is the file ``path``.  A result from the workspace cache names the
    file as it was given when it was cached (e.g. relative to another folder): then name and size decide."""
    where = str(result.meta.get("path") or result.file)        # the path itself where the name is not UTF-8
    if same_file(where, path):
        return True
    try:
        return os.path.basename(where) == os.path.basename(path) and \
            int(getattr(result, "size", -1)) == os.path.getsize(path)
    except (OSError, TypeError, ValueError):
        return False


def _readable(window, paths: list[str], quiet: bool = False) -> list:
    """The window's readable results of ``paths``; each unreadable one is named on stderr (unless ``quiet``)."""
    out = []
    for r in window.ws.files:
        if not any(_is_result_of(r, p) for p in paths):
            continue
        if getattr(r, "readable", True):
            out.append(r)
            continue
        if quiet:
            continue
        why = next((f.message for f in r.findings if f.severity == "error"), None) or \
            next((f.message for f in r.findings), "no CPU MF records")
        _err("export", f"nothing readable: {why}" if str(r.file) in why else f"{r.file}: nothing readable ({why})")
    return out


def _picture(args: argparse.Namespace, size: tuple[int, int], qapp, window, paths: list[str]) -> int:
    from app.export import ExportError
    from app.ui.plot_export import save_picture

    _wait(qapp, window)
    if not _readable(window, paths):
        _err("export", "nothing readable was found in the given files")
        return EXIT_NOTHING
    if args.before:
        got = _comparison_target(args, qapp, window, size)
    else:
        got = _timeline_target(args, qapp, window)
    if isinstance(got, int):
        return got
    target, header, what = got
    for _ in range(3):
        qapp.processEvents()
    for text in getattr(window, "errors", []):   # unexpected errors the window met (shown in a dialog there)
        _err("export", f"note: {text}")
    try:
        save_picture(target, args.out, size, title=args.title, header=header, inputs=paths)
    except ExportError as exc:
        _err("export", f"error: {exc}")
        return EXIT_USAGE
    print(display_text(f"wrote {args.out} ({size[0]}x{size[1]}, {what})"), file=sys.stderr)
    return EXIT_OK


def _timeline_target(args: argparse.Namespace, qapp, window):
    """Select the nodes, show the Timelines; (plot or panel, legend header, description) or an exit code.  The
    LPARs and the nodes under them are found in the window's workspace (:mod:`app.analysis.selection`), in the
    order of the window's tree."""
    from app.analysis.selection import counter_nodes, pick_lpars

    chosen, unknown, have = pick_lpars(window.ws, args.lpar)
    if not have:
        _err("export", "error: no LPAR with CPU MF counters in the files: nothing to plot")
        return EXIT_NOTHING
    if unknown:
        _err("export", f"error: --lpar {', '.join(unknown)}: not in the files (LPARs with counters: "
                       f"{', '.join(have)})")
        return EXIT_USAGE
    pairs = [tuple(k[1:3]) for k in chosen]
    level = {"interval": "lpar", "pool": "lpar"}.get(args.by, args.by)
    if level == "cec":
        keys = list(dict.fromkeys(("cec", p[0]) for p in pairs))
    elif level == "lpar":
        keys = list(chosen)
    else:
        keys = counter_nodes(window.ws, level, pairs)
    window.tree.select_keys(keys)
    _wait(qapp, window)
    tl = window.timeline
    window.tabs.setCurrentWidget(tl)
    _wait(qapp, window)
    tl.ensure_drawn()
    if not tl.series and not tl.has_cec():
        _err("export", f"error: no interval values to plot for {_keys_text(keys)}")
        return EXIT_USAGE
    what = "timelines of " + _keys_text(keys)
    # the overview's title asks to drag its region: on a picture it says what the overview is
    tl.overview.titleLabel.setText(OVERVIEW_TITLE)
    if args.start is not None or args.end is not None:
        lo, hi = tl.data_range()
        a = args.start.timestamp() if args.start is not None else lo
        b = args.end.timestamp() if args.end is not None else hi
        a, b = max(a, lo - 1), min(b, hi + 1)   # within the data (a little slack for the first interval)
        if not b > a:
            _err("export", f"error: --from/--to: no intervals of {_keys_text(keys)} in this window (the data "
                           f"spans {_utc(lo)} .. {_utc(hi)} UTC)")
            return EXIT_USAGE
        _zoom(tl, a, b)
        tl.overview.titleLabel.setText(OVERVIEW_ZOOMED)
        what += f", {_utc(a)} .. {_utc(b)} UTC"
    target = tl.glw
    if args.metric:
        pid = PLOT_OF[_norm(args.metric)]
        plot = tl.cec_plot if pid == "cec" else tl.plots[pid]
        if pid != "cec":
            _check_plot(tl, pid)
        if not plot.isVisible():
            shown = ([] if not tl.has_cec() else ["cec"]) + tl.visible_plots()
            _err("export", f"error: --metric {args.metric}: no values to plot for {_keys_text(keys)} (plots with "
                           f"data: {', '.join(shown) or 'none'}{'; cec needs --by cec' if pid == 'cec' else ''})")
            return EXIT_USAGE
        target = plot
        what = f"{args.metric} of " + what
    return target, window.compare.timeline_header(), what


def _check_plot(tl, pid: str) -> None:
    """Tick plot ``pid`` in the timeline's plot list (e.g. MT, unticked by default)."""
    from PySide6.QtCore import Qt

    for i in range(tl.chooser.count()):
        item = tl.chooser.item(i)
        if item.data(Qt.ItemDataRole.UserRole) == pid and item.checkState() != Qt.CheckState.Checked:
            item.setCheckState(Qt.CheckState.Checked)


def _zoom(tl, a: float, b: float) -> None:
    """The plots show [a, b] (epoch s), value axes fitted to what is shown; the overview shows it as the region."""
    tl.base_vb.setXRange(a, b, padding=0)
    for p in tl._data_plots().values():
        vb = p.getViewBox()
        if vb.autoRangeEnabled()[1]:
            vb.setAutoVisible(y=True)
            vb.enableAutoRange(axis="y")
    tl.region.blockSignals(True)
    tl.region.setRegion((a, b))
    tl.region.blockSignals(False)


def _utc(epoch: float) -> str:
    import pandas as pd

    return pd.Timestamp(epoch, unit="s").strftime("%Y-%m-%d %H:%M")


def _keys_text(keys: list) -> str:
    names = [" / ".join(str(v) for v in k[1:]) for k in keys]
    return ", ".join(names[:4]) + (f" and {len(names) - 4} more" if len(names) > 4 else "") or "(nothing)"


def _side_nodes(args: argparse.Namespace, window, side: str):
    """(LPAR keys, start, end) of one comparison side over the window's workspace, or an exit code."""
    import pandas as pd

    files = list(getattr(args, side))
    results = _readable(window, files, quiet=True)   # the unreadable ones were named already
    if not results:
        _err("export", f"nothing readable was found in the {side} files")
        return EXIT_NOTHING
    iv = window.ws.intervals
    sources = {str(r.file) for r in results}
    rows = iv.loc[iv["source"].astype(str).isin(sources)] if len(iv) else iv
    pairs = list(dict.fromkeys(zip(rows["cec"].astype(str), rows["lpar"].astype(str)))) if len(rows) else []
    if not pairs:
        _err("export", f"error: the {side} files hold no LPAR with CPU MF counters")
        return EXIT_NOTHING
    names = getattr(args, f"{side}_lpar")
    if names:
        unknown = [w for w in names if not any(lp.upper() == w.upper() for _c, lp in pairs)]
        if unknown:
            _err("export", f"error: --{side}-lpar {', '.join(unknown)}: not in the {side} files (LPARs with "
                           f"counters: {', '.join(sorted({lp for _c, lp in pairs}))})")
            return EXIT_USAGE
        pairs = [(c, lp) for c, lp in pairs if any(lp.upper() == w.upper() for w in names)]
    start, end = getattr(args, f"{side}_from"), getattr(args, f"{side}_to")
    other = "after" if side == "before" else "before"
    same_files = {os.path.abspath(p) for p in files} == {os.path.abspath(p) for p in getattr(args, other)}
    if not same_files:   # the side is its files: their time only (same CEC and LPAR in both is common)
        if start is None:
            start = pd.Timestamp(rows["interval_start"].min())
        if end is None:
            end = pd.Timestamp(rows["interval_end"].max())
    return [("lpar", c, lp) for c, lp in pairs], start, end


def _comparison_target(args: argparse.Namespace, qapp, window, size: tuple[int, int]):
    """Set both sides on the Compare tab; (charts, "", description) or an exit code."""
    ctl = window.compare
    tab = ctl.tab
    sides = {}
    for side in ("before", "after"):
        got = _side_nodes(args, window, side)
        if isinstance(got, int):
            return got
        sides[side] = got
    tab.set_by(args.compare_by or "lpar")
    for side, (nodes, start, end) in sides.items():
        tab.set_side(side, nodes, start, end, getattr(args, f"{side}_hours") or args.hours or "",
                     getattr(args, f"{side}_days") or args.days or "")
    _wait(qapp, window)
    window.tabs.setCurrentWidget(tab)
    _wait(qapp, window)
    cmp = tab.comparison
    if cmp is None:
        _err("export", f"error: the comparison could not be made: {tab.message.text()}")
        return EXIT_USAGE
    for side in ("before", "after"):
        if not (len(cmp.table) and (cmp.table["row"].eq(side) & cmp.table["CPI"].notna()).any()):
            _err("export", f"note: the {side} selection holds no intervals (check its window, LPARs and shift)")
    if args.pair and not tab.set_pair(args.pair):
        _err("export", f"error: --pair {args.pair}: not a pair of this comparison (pairs: {', '.join(tab.pairs())})")
        return EXIT_USAGE
    shown = tab.pair.currentData()
    what = "comparison: CPI waterfall" + (f" of {shown}" if shown is not None else "") + \
        " and overlaid CPI timelines"
    target = tab.charts
    if args.metric and _norm(args.metric) == WATERFALL:
        target, what = tab.wf_plot, "comparison: CPI waterfall" + (f" of {shown}" if shown is not None else "")
        # the window hides the values on the bars when its chart is narrow (the numbers are beside it there);
        # alone in a picture the bars carry them whenever the picture is wide enough (compare_tab's rule)
        labels = getattr(tab, "_wf_labels", [])
        for item in labels:
            item.setVisible((size[0] - 70) / max(len(labels), 1) >= 50)
    elif args.metric:
        mid = _overlay_metric(args.metric)
        i = tab.metric_box.findData(mid)
        if i < 0:
            have = [str(tab.metric_box.itemData(k)) for k in range(tab.metric_box.count())]
            _err("export", f"error: --metric {args.metric}: no values on either side (overlaid metrics: "
                           f"{', '.join(have) or 'none'})")
            return EXIT_USAGE
        tab.metric_box.setCurrentIndex(i)
        target, what = tab.ov_plot, f"comparison: overlaid {mid} timelines"
    qapp.processEvents()
    return target, "", what
