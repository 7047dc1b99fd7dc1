"""``nestscope export FILE... --out PATH [--by LEVEL] [--from T --to T] [--hours H --days D] [comparison]``

Writes CSV, XLSX or PPTX (the format from the extension of ``--out``) through
:func:`app.export.export`, the code path the window uses.  With ``--before FILE... --after
FILE...`` a comparison is added (Compare sheet, comparison slides and the CPI waterfall; a CSV
then holds the comparison table); without ``FILE...`` the export covers the before and after
files.  PNG/SVG: pictures are rendered by the window (``nestscope snapshot``), see the message.

Exit codes: 0 written, 2 usage error (bad option, bad extension, unwritable target, target is an
input file), 3 nothing readable.
"""

from __future__ import annotations

import argparse
import sys

from app.commands.compare import (EXIT_NOTHING, EXIT_OK, EXIT_USAGE, _err, add_selection_options, add_shift_options,
                                  build_comparison, lpar_nodes, make_workspace, read_files, report_unreadable)
from app.commands.report import _time

LEVELS = ("interval", "cpu", "class", "lpar", "cec")


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register the ``export`` subcommand."""
    p = sub.add_parser("export", help="write CSV, Excel (.xlsx) or PowerPoint (.pptx) for slide decks",
                       description="Export metrics (and a before/after comparison) to .csv, .xlsx or .pptx; the "
                                   "format comes from the extension of --out. Times are UTC.")
    p.add_argument("files", nargs="*", metavar="FILE", help="SMF or MONWRITE file (gzip allowed)")
    p.add_argument("--out", required=True, metavar="PATH", help="target file: .csv, .xlsx or .pptx")
    p.add_argument("--by", choices=LEVELS, default="lpar",
                   help="level of the CSV rows and of the slide summary table (default lpar)")
    p.add_argument("--from", dest="start", type=_time, metavar="T", help="only intervals ending after T (UTC)")
    p.add_argument("--to", dest="end", type=_time, metavar="T", help="only intervals ending at or before T (UTC)")
    p.add_argument("--lpar", action="append", metavar="NAME", help="only this LPAR (repeatable; default all)")
    add_shift_options(p)
    p.add_argument("--title", default="CPU MF analysis", help="title of the deck / workbook")
    p.add_argument("--formulas", metavar="FILE", help="JSON file overriding/adding formulas (see docs)")
    add_selection_options(p, required=False)
    return p


def run(args: argparse.Namespace) -> int:
    """Read, compute and write the export; returns the exit code."""
    from app.engine import FormulaFileError
    from app.engine.shift import ShiftError, make_shift
    from app.export import ExportError, ExportRequest, export, format_of

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
    if args.start is not None and args.end is not None and args.start >= args.end:
        _err("export", f"error: --from {args.start} is not before --to {args.end}")
        return EXIT_USAGE
    try:
        shift = make_shift(args.hours, args.days)
    except ShiftError as exc:
        _err("export", f"error: {exc}")
        return EXIT_USAGE
    comparison = None
    if args.before:
        comparison, code = build_comparison(args, "export", args.compare_by or "lpar")
        if comparison is None:
            return code
    paths = list(args.files) or list(dict.fromkeys(args.before + args.after))
    results = read_files(paths, "export")
    if not any(r.readable for r in results):
        report_unreadable(results, "export", "given")
        return EXIT_NOTHING
    try:
        ws = make_workspace(results, args.formulas)
    except FormulaFileError as exc:
        _err("export", f"error: --formulas {exc}")
        return EXIT_USAGE
    nodes, unknown = lpar_nodes(ws, args.lpar)
    if unknown:
        _err("export", f"error: --lpar {', '.join(unknown)}: not in the files")
        return EXIT_USAGE
    req = ExportRequest(ws, by=args.by, start=args.start, end=args.end, nodes=nodes, shift=shift,
                        comparison=comparison, title=args.title)
    try:
        res = export(req, args.out)
    except ExportError as exc:
        _err("export", f"error: {exc}")
        return EXIT_USAGE
    what = ", ".join(f"{v} {k}" for k, v in res.items.items())
    print(f"wrote {res.path} ({what})", file=sys.stderr)
    return EXIT_OK
