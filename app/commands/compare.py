"""``nestscope compare --before FILE... --after FILE... [...]``: before/after comparison.

Per LPAR (``--by lpar``) or per LPAR and processor class (``--by class``): the before row, the
after row, IBM's ratio row (before / after, as the "% improvement" rows of IBM's CPU MF
presentations divide the old value by the new) and the delta row (after - before), in the
presentation's column layout, then the CPI change split into the instruction-complexity part
and the finite-cache part (L1MP effect + SCPL1M effect, midpoint split; :mod:`app.engine.compare`).

``--hours 08-17 --days mon-fri`` filter both sides (in the ``--tz`` zone); ``--before-hours`` etc. one side
(prime shift against night on the same files).  Every format shows each side's times in the ``--tz`` zone by that
side's own offsets (local by default once an offset is known): the table names the zone in its heading and gives
the windows in it, ``--format csv`` and ``--format json`` write each time in ISO 8601 with its offset (JSON: a
``zone`` field in ``meta``; UTC output is as it always was).  Exit codes: 0 data read, 2 usage error
(bad time, bad shift text, unknown LPAR), 3 nothing readable on one side.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from typing import Any

from app.commands.report import _time
from app.engine.layout import compare_cell, display
from app.textsafe import display_text

EXIT_OK, EXIT_USAGE, EXIT_NOTHING = 0, 2, 3


def add_selection_options(p: argparse.ArgumentParser, required: bool) -> None:
    """The ``--before...``/``--after...`` and shift options (shared by ``compare`` and ``export``)."""
    g = p.add_argument_group("comparison" if not required else "selections")
    for side in ("before", "after"):
        g.add_argument(f"--{side}", nargs="+", metavar="FILE", required=required,
                       help=f"the {side} files (SMF 113 / MONWRITE, gzip allowed)")
        g.add_argument(f"--{side}-from", type=_time, metavar="T", help=f"{side}: intervals ending after T (UTC)")
        g.add_argument(f"--{side}-to", type=_time, metavar="T", help=f"{side}: intervals ending at or before T")
        g.add_argument(f"--{side}-lpar", action="append", metavar="NAME",
                       help=f"{side}: only this LPAR (repeatable; default all)")
        g.add_argument(f"--{side}-hours", metavar="HH-HH", help=f"{side} only: hours of the day (overrides --hours)")
        g.add_argument(f"--{side}-days", metavar="DAYS", help=f"{side} only: days of the week (overrides --days)")
    g.add_argument("--compare-by", dest="compare_by", choices=("lpar", "class"), default=None,
                   help=argparse.SUPPRESS if required else "comparison rows per lpar or class (default lpar)")


def add_shift_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--hours", metavar="HH-HH", help="only intervals whose midpoint lies in these hours, in the "
                                                    "--tz zone (e.g. 08-17, 08:00-17:30, 22-06, a list 08-12,13-17)")
    p.add_argument("--days", metavar="DAYS", help="only these days of the week (e.g. mon-fri, sat,sun)")
    from app.commands.report import add_tz

    add_tz(p)


def zoned(shift, ws, tz: str | None):
    """``shift`` read in ``tz`` (None: the workspace's default, local once a system's offset is known)."""
    import dataclasses

    tz = tz or ws.zones.default()
    return shift if shift is None or shift.tz == tz else dataclasses.replace(shift, tz=tz)


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register the ``compare`` subcommand."""
    p = sub.add_parser("compare", help="before/after comparison with IBM's ratio row and the CPI decomposition",
                       description="Compare a before and an after selection (files, window, LPARs, shift) per LPAR "
                                   "or processor class: before, after, ratio (before/after) and delta "
                                   "(after-before) rows, and the CPI change split into its parts. Times are in the "
                                   "--tz zone (local by default once the systems' offsets are known).")
    add_selection_options(p, required=True)
    add_shift_options(p)
    p.add_argument("--by", choices=("lpar", "class"), default="lpar", help="rows per LPAR or per processor class")
    p.add_argument("--format", choices=("table", "csv", "json"), default="table", help="output format")
    p.add_argument("--formulas", metavar="FILE", help="JSON file overriding/adding formulas (see docs)")
    p.add_argument("--out", metavar="FILE", help="write to FILE instead of standard output")
    from app.commands.report import add_keep_implausible

    add_keep_implausible(p)
    return p


def _err(prog: str, text: str) -> None:
    print(display_text(f"nestscope {prog}: {text}"), file=sys.stderr)   # names from the data: escaped


def say(prog: str, messages: list) -> None:
    """Print the application layer's messages (:class:`app.analysis.Message`) on stderr, as the commands do."""
    for m in messages:
        if m.kind == "finding":
            print(f"[{m.severity}] {display_text(m.text)}", file=sys.stderr)
        else:
            _err(prog, m.line())


def side_specs(args: argparse.Namespace) -> dict:
    """The ``--before...``/``--after...`` options as the two sides (a side's ``--{side}-hours`` wins over
    ``--hours``)."""
    from app.analysis import SideSpec

    return {side: SideSpec(list(getattr(args, side)), getattr(args, f"{side}_from"), getattr(args, f"{side}_to"),
                           getattr(args, f"{side}_lpar"), getattr(args, f"{side}_hours") or args.hours,
                           getattr(args, f"{side}_days") or args.days) for side in ("before", "after")}


def comparison_request(args: argparse.Namespace, by: str):
    """The :class:`app.analysis.ComparisonRequest` of the options."""
    from app.analysis import ComparisonRequest

    sides = side_specs(args)
    return ComparisonRequest(sides["before"], sides["after"], by=by, formulas=args.formulas,
                             keep_implausible=getattr(args, "keep_implausible", False),
                             tz=getattr(args, "tz", None))


def build_comparison(args: argparse.Namespace, prog: str, by: str) -> tuple[Any, int]:
    """Read both sides and compare (:func:`app.analysis.build_comparison`), telling what went wrong on stderr;
    returns (Comparison or None, exit code)."""
    from app.analysis import build_comparison as build

    got = build(comparison_request(args, by))
    say(prog, got.messages)
    return got.comparison, got.code


# ------------------------------------------------------------------ output
_fmt = display      # the one display form of a table value (app.engine.layout)


_SHORT = {"Est_Instr_Cmplx_CPI": "ICmplx", "Est_Finite_CPI": "FinCPI", "Est_SCPL1M": "SCPL1M", "PRBSTATE": "PrbSt",
          "RNI": "RNI", "Eff_GHz": "GHz", "Workload_Hint": "Hint"}


cell_text = compare_cell      # one rule for comparison cells (app.engine.layout), shared with the exports


def decomposition_lines(c) -> list[str]:
    """One text line per pair: the CPI change and its parts."""
    out = []
    for r in c.cpi.to_dict("records"):
        head = f"CPI change {display_text(r['pair'])}: {_fmt(r['cpi_before'], 3)} -> {_fmt(r['cpi_after'], 3)} " \
               f"({_fmt(r['d_cpi'], 3, True)})"
        if math.isfinite(float(r["d_instr_cmplx"])):
            head += f" = instr complexity {_fmt(r['d_instr_cmplx'], 3, True)} + finite {_fmt(r['d_finite'], 3, True)}"
        if math.isfinite(float(r["d_l1mp_effect"])):
            head += f" [L1MP effect {_fmt(r['d_l1mp_effect'], 3, True)}, SCPL1M effect " \
                    f"{_fmt(r['d_scpl1m_effect'], 3, True)}" + \
                    (f", other {_fmt(r['d_other'], 3, True)}" if r["d_other"] else "") + "]"
        if r["note"]:
            head += f"  ({r['note']})"
        out.append(head)
    return out


def to_table(c, tz: str = "utc") -> str:
    """The comparison as fixed-width text; the heading names the zone ``tz`` and each side's window is on that
    zone's wall clock (by the side's own offsets, :meth:`app.engine.compare.Selection.describe`)."""
    from app.export.tables import comparison_zone

    cols = [s for s in c.main_columns()]
    heads = [_SHORT.get(s.id, s.header if len(s.header) <= 8 else s.id[:8]) + ("*" if s.id in c.marks else "")
             for s in cols]
    lines = [f"NestScope comparison per {c.by}, times {comparison_zone(c, tz)}; {c.ratio_note}",
             display_text(f"before: {c.before.describe(tz)}"), display_text(f"after:  {c.after.describe(tz)}")]
    t = c.table
    labels = [display_text(x) for x in t["label"]]
    kinds = list(t["row"])
    w0 = max([len("Row"), *(len(x) + 7 for x in labels)]) if len(t) else 10
    cells = []
    for i, rec in enumerate(t.to_dict("records")):
        cells.append([cell_text(kinds[i], s.id, rec.get(s.id), s.decimals) for s in cols])
    widths = [max(len(h), *(len(r[j]) for r in cells)) if cells else len(h) for j, h in enumerate(heads)]
    lines.append(f"{'Row':<{w0}} " + " ".join(f"{h:>{w}}" for h, w in zip(heads, widths)))
    last = None
    for i, row in enumerate(cells):
        if last is not None and t["pair"].iloc[i] != last:
            lines.append("")
        last = t["pair"].iloc[i]
        name = f"{kinds[i]:<6} {labels[i]}" if kinds[i] in ("before", "after") else labels[i]
        lines.append(f"{name:<{w0}} " + " ".join(f"{x:>{w}}" for x, w in zip(row, widths)))
    if c.marks:
        lines.append("")
        lines.append("* formulas differ between the two generations:")
        for mid, why in c.marks.items():
            lines.append(f"  {mid}: {why}")
    lines.append("")
    lines += decomposition_lines(c)
    return "\n".join(lines) + "\n"


def _jnum(v: Any) -> Any:
    if v is None:
        return None
    if isinstance(v, (bool, str)):
        return v
    try:
        f = float(v)
    except (TypeError, ValueError):
        return str(v)
    if not math.isfinite(f):
        return None
    return int(f) if f == int(f) and not isinstance(v, float) else f


def _zoned_window(window: dict, sel, table, rows: list[int], offs: dict, tz: str) -> dict:
    """A side's provenance window with ``first``/``last`` (its data's first start and last end) in ``tz``: the
    offset of the side's table row holding that time, else the offset the side's systems share at it (none
    shared: UTC, ``Z``).  ``from``/``to`` are the window as asked for, in UTC (``--before-from`` etc. are UTC)."""
    import pandas as pd

    from app.engine.timezone import iso_time

    out = dict(window)
    for key, col in (("first", "interval_start"), ("last", "interval_end")):
        if not out.get(key):
            continue
        t = pd.Timestamp(out[key]).tz_localize(None)
        hit = [i for i in rows if pd.Timestamp(table[col].iloc[i]) == t] if col in offs else []
        off = offs[col][hit[0]] if hit else float(sel.workspace.zones.offsets(tz, [t.to_datetime64()])[0])
        out[key] = iso_time(t, off)
    return out


def to_json(c, request_like, tz: str = "utc") -> str:
    """The comparison as a JSON document: meta (provenance of both sides, marks), rows, cpi, waterfall.  In a zone
    other than UTC each time is ISO 8601 with its offset (a side's rows by that side's offsets, as the CSV) and
    ``meta.zone`` names the zone; UTC output is as it always was (``...Z``, no ``zone``)."""
    from app.engine.timezone import iso_time
    from app.export.provenance import iso, provenance
    from app.export.tables import comparison_offsets, comparison_zone

    prov = provenance(request_like)
    offs = comparison_offsets(c, tz)
    rows = []
    for i, rec in enumerate(c.table.to_dict("records")):
        rows.append({k: (((iso_time(v, offs[k][i]) or None) if k in offs else iso(v))   # no time: null
                         if k in ("interval_start", "interval_end") else _jnum(v)) for k, v in rec.items()})
    cpi = [{k: _jnum(v) for k, v in r.items()} for r in c.cpi.to_dict("records")]
    wf = {p: [{k: _jnum(v) for k, v in s.items()} for s in c.waterfall(p).to_dict("records")]
          for p in c.cpi["pair"]} if len(c.cpi) else {}
    doc = {"meta": {"by": c.by, "ratio": c.ratio_note, "marks": c.marks, "app": prov["app"],
                    "before": prov["comparison"]["before"], "after": prov["comparison"]["after"],
                    "columns": [s.id for s in c.columns]},
           "rows": rows, "cpi": cpi, "waterfall": wf}
    if tz not in (None, "utc"):
        doc["meta"]["zone"] = comparison_zone(c, tz)
        kinds = c.table["row"].astype(str).tolist()
        for side, sel in (("before", c.before), ("after", c.after)):
            side_rows = [i for i, k in enumerate(kinds) if k == side]
            doc["meta"][side] = dict(doc["meta"][side], window=_zoned_window(doc["meta"][side]["window"], sel, c.table,
                                                                              side_rows, offs, tz))
    from app.textsafe import json_text

    return json_text(json.dumps(doc, indent=1, allow_nan=False, default=str)) + "\n"


def shown_zone(c, tz: str | None) -> str:
    """The zone a comparison's times are shown in: ``tz``, else local once either side's offsets are known and
    not all 0 (as each side's workspace default), else UTC."""
    if tz:
        return tz
    return "local" if "local" in (c.before.workspace.zones.default(), c.after.workspace.zones.default()) else "utc"


def to_csv(c, tz: str = "utc") -> str:
    """The comparison table as CSV; each side's times in ``tz`` by its own offsets (each cell with its offset)."""
    from app.engine.metrics import metric_ids
    from app.export.csv import compare_columns, rows_csv
    from app.export.tables import comparison_offsets
    from app.textsafe import csv_line

    ids = list(dict.fromkeys(metric_ids(c.before.workspace.formula_sets) + metric_ids(c.after.workspace.formula_sets)))
    cols = compare_columns(c.by, ids)
    return csv_line(cols) + "".join(csv_line(r) for r in rows_csv(c.table, cols, comparison_offsets(c, tz)))


def run(args: argparse.Namespace) -> int:
    """Compare, print or write; returns the exit code."""
    from app.export import ExportRequest

    c, code = build_comparison(args, "compare", args.by)
    if c is None:
        return code
    zone = shown_zone(c, getattr(args, "tz", None))      # every format's times in this zone
    if args.format == "table":
        from app.commands.report import left_out_line
        from app.textsafe import terminal_text

        text = terminal_text(to_table(c, zone)) + "".join(f"{side}: {line}" for side, line in
                                                    (("before", left_out_line(c.before.workspace)),
                                                     ("after", left_out_line(c.after.workspace))) if line)
    elif args.format == "csv":
        text = to_csv(c, zone)
    else:
        text = to_json(c, ExportRequest(c.after.workspace, by=c.by, comparison=c), zone)
    if args.out:
        from app.export import ExportError, write_text

        try:
            write_text(args.out, text, list(dict.fromkeys(args.before + args.after)))
        except ExportError as exc:
            _err("compare", f"error: {exc}")
            return EXIT_USAGE
    else:
        sys.stdout.write(text)
    return EXIT_OK
