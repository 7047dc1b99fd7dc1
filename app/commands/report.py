"""``nestscope report FILE... [--by LEVEL] [--from T] [--to T] [--format F] [--formulas FILE] [--out FILE]``

Computes CPU MF metrics at one level of the CEC -> LPAR -> class -> CPU tree.

* ``csv``: identity columns of the level (cec, lpar, system, class, cpu),
  interval_start, interval_end (ISO 8601 UTC), one column per metric id of
  ``metrics.json`` in full precision (empty cell = does not apply), then
  Workload_Hint, then n_cpus, generation, formula_set (the formula-set version
  used), quality and left_out (CPU-intervals of the row left out as implausible,
  docs/physical-bounds.md; ``--keep-implausible`` keeps them).
* ``json``: ``{"meta": {files, formula_sets, statuses, window, level}, "rows": [...], "findings": [...]}``.
* ``table``: IBM presentation order and rounding, abbreviated to fit about 120
  columns, with the formula-set versions in the header.

``--by smt-type`` / ``--by smt-core``: multithreading metrics per core type (with a
``mean`` row per LPAR and core type) or per core, as IBM's SMTMET reports lay them
out (:mod:`app.engine.smt_report`); csv/json carry the frame's columns in full
precision, the table rounds productivity, CF, mCF, MT utilization and core busy to
1 decimal and thread density to 2.

Exit codes: 0 data read, 2 usage error (bad time, bad --formulas file: the
message names the line), 3 nothing readable.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import math
import sys
from typing import Any

import numpy as np
import pandas as pd

from app.engine.layout import MISSING, display
from app.engine.partitions import enrich
from app.export.tables import csv_columns
from app.textsafe import csv_line, csv_text, display_text, json_text, terminal_text

EXIT_OK, EXIT_USAGE, EXIT_NOTHING = 0, 2, 3
BY_CHOICES = ("interval", "cpu", "class", "lpar", "cec", "smt-type", "smt-core", "hour", "weekday", "hour-weekday",
              "pool")
PROFILE_BY = ("hour", "weekday", "hour-weekday")
SMT_BY = {"smt-type": "type", "smt-core": "core"}
_ABBR = {"CPI": "CPI", "PRBSTATE": "PrbSt", "Est_Instr_Cmplx_CPI": "ICmplx", "Est_Finite_CPI": "FinCPI",
         "Est_SCPL1M": "SCPL1M", "L1MP": "L1MP", "L15P": "L15P", "L2LP": "L2LP", "L2RP": "L2RP", "L2P": "L2P",
         "L3P": "L3P", "L4LP": "L4LP", "L4RP": "L4RP", "MEMP": "MEMP", "RNI": "RNI", "LPARCPU": "LPARCPU",
         "Eff_GHz": "GHz", "Workload_Hint": "Hint"}
TABLE_WIDTH = 120


def _time(text: str) -> pd.Timestamp:
    from app.engine.aggregate import _ts

    try:
        ts = _ts(text)     # the engine's own UTC normalization of window bounds
    except (ValueError, TypeError):
        raise argparse.ArgumentTypeError(f"not an ISO 8601 time: {text!r} (e.g. 2026-01-05T08:00 or "
                                         "2026-01-05T08:00Z)") from None
    if ts is pd.NaT:
        raise argparse.ArgumentTypeError(f"not an ISO 8601 time: {text!r}")
    return ts


def tz_arg(text: str) -> str:
    """``--tz`` value: ``local``, ``utc`` or an IANA zone name (a usage error otherwise)."""
    from app.engine.timezone import TzError, parse_tz

    try:
        return parse_tz(text)
    except TzError as exc:
        raise argparse.ArgumentTypeError(str(exc).removeprefix("--tz ")) from None


def add_tz(p: argparse.ArgumentParser) -> None:
    """The ``--tz`` option of every command that prints or filters times."""
    p.add_argument("--tz", type=tz_arg, default=None, metavar="local|utc|ZONE",
                   help="time zone of the times shown and of --hours/--days: local (each system's own UTC offset, "
                        "from its records; the default once an offset is known, else UTC), utc, or an IANA zone "
                        "name such as Europe/Berlin; --from/--to stay UTC unless they carry an offset")


def zone_times(ws, tz: str | None, m: pd.DataFrame, cols=("interval_start", "interval_end")):
    """(tz, {column: seconds east of UTC per row}, label) of the time columns of ``m`` in the choice ``tz``
    (None: the default, local once an offset is known)."""
    z = ws.zones
    tz = tz or z.default()
    offs = {c: z.offsets(tz, m[c], m) for c in cols if c in m.columns}
    allo = np.concatenate(list(offs.values())) if offs else None
    return tz, offs, z.label(tz, allo if allo is not None and len(allo) else None)


def zone_meta(ws, tz: str, label: str) -> dict:
    """``meta.tz`` of a JSON document: the choice, its label and each system's offsets and switches."""
    from app.engine.timezone import offset_text

    z = ws.zones
    return {"mode": tz, "label": label,
            "systems": [{"cec": k[0], "lpar": k[1], "system": k[2],
                         "utc_offsets": [offset_text(o) for o in offs]} for k, offs in z.system_offsets().items()]
            + [{"cec": k[0], "lpar": k[1], "system": k[2], "utc_offsets": None,
                "note": "offset cannot be derived: UTC"} for k in z.unknown],
            "switches": [{"lpar": k[1], "time": _iso(t), "from": offset_text(a), "to": offset_text(b)}
                         for k, t, a, b in z.switches()]}


def shown_in_zone(m: pd.DataFrame, offs: dict) -> pd.DataFrame:
    """``m`` with its time columns moved to the wall-clock times of their offsets (tables, charts)."""
    if not offs or not any(np.any(o != 0) for o in offs.values()):
        return m
    return m.assign(**{c: m[c] + pd.to_timedelta(o, unit="s") for c, o in offs.items()})


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register the ``report`` subcommand."""
    p = sub.add_parser("report", help="compute CPU MF metrics (CPI, L1MP, sourcing, RNI, LPARCPU...) per level",
                       description="Compute CPU MF metrics from SMF 113 / MONWRITE files at one level of the "
                                   "CEC -> LPAR -> class -> CPU tree. Times are UTC.")
    p.add_argument("files", nargs="+", metavar="FILE", help="SMF or MONWRITE file (gzip allowed)")
    p.add_argument("--by", choices=BY_CHOICES, default="lpar",
                   help="level: interval (LPAR x class x interval), cpu (per CPU and interval), class, lpar, "
                        "cec (whole window); smt-type / smt-core: multithreading metrics per core type "
                        "(with a mean row) or per core; hour / weekday / hour-weekday: a profile of the --level's nodes "
                        "by hour of day (column hour), day of week or both (counters summed per hour, then the "
                        "formulas); pool: one row per CEC and processor type (class column) over all its LPARs "
                        "(default lpar)")
    p.add_argument("--level", choices=("cec", "lpar", "class"), default="lpar",
                   help="nodes of a profile (--by hour|weekday|hour-weekday; default lpar)")
    p.add_argument("--top", type=int, metavar="N",
                   help="with --by cec|lpar|class|cpu and --metric: the N intervals of that level with the "
                        "largest metric, largest first (rank, interval, the hour it falls in)")
    p.add_argument("--metric", metavar="NAME", default=None,
                   help="the metric --top ranks by (a metric id: CPI, RNI, L1MP, LPARCPU, ...)")
    p.add_argument("--from", dest="start", type=_time, metavar="T", help="only intervals ending after T (UTC)")
    p.add_argument("--to", dest="end", type=_time, metavar="T", help="only intervals ending at or before T (UTC)")
    p.add_argument("--hours", metavar="HH-HH", help="only intervals whose midpoint lies in these hours, UTC "
                                                    "(e.g. 08-17, 22-06, a list 08-12,13-17)")
    p.add_argument("--days", metavar="DAYS", help="only these days of the week (e.g. mon-fri, sat,sun)")
    add_tz(p)
    p.add_argument("--format", choices=("table", "csv", "json"), default="table", help="output format")
    p.add_argument("--formulas", metavar="FILE", help="JSON file overriding/adding formulas (see docs)")
    p.add_argument("--out", metavar="FILE", help="write to FILE instead of standard output")
    add_keep_implausible(p)
    return p


def add_keep_implausible(p: argparse.ArgumentParser) -> None:
    """The ``--keep-implausible`` switch of every command that computes metrics."""
    p.add_argument("--keep-implausible", action="store_true",
                   help="keep CPU-intervals whose counter deltas break a physical bound (docs/physical-bounds.md) "
                        "in every sum; by default they are left out, each named in an 'implausible' finding")


def left_out_line(ws, m: pd.DataFrame | None = None) -> str:
    """One line saying how many implausible CPU-intervals were left out of (or kept in) ``m``'s sums and why
    ('' when there are none)."""
    n_bad, n_out = ws.left_out_count()
    if m is not None and "left_out" in m.columns and len(m):
        n_out = int(m["left_out"].sum())
    if n_out:
        return (f"left out: {n_out} CPU-interval(s) whose counter deltas break a physical bound (damaged "
                "records?); the 'implausible' findings name file, offset, counter, value and bound; "
                "--keep-implausible keeps them\n")
    if n_bad and ws.keep_implausible:
        return f"kept: {n_bad} implausible CPU-interval(s) are in the sums (--keep-implausible)\n"
    return ""


def _iso(v: Any, offset_s: float | None = None) -> str:
    """A UTC time as ISO 8601: ``...Z``, or the wall-clock time with its offset (``...+02:00``)."""
    if v is None or (isinstance(v, float) and math.isnan(v)) or v is pd.NaT:
        return ""
    from app.engine.timezone import iso_time

    return iso_time(v, offset_s)


def _num(v: Any) -> Any:
    if v is None:
        return None
    if isinstance(v, (np.integer,)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        return None if not np.isfinite(v) else float(v)
    return v


def _csv_cell(v: Any) -> str:
    """One CSV cell: full precision, empty when the value does not apply; text by :func:`app.textsafe.csv_text`
    (control characters escaped, a formula neutralised)."""
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    return csv_text(v)


def to_csv(m: pd.DataFrame, by: str, ids: list[str], lead: tuple[str, ...] = (), offsets: dict | None = None) -> str:
    """Metrics frame -> CSV text (full precision, ISO times, empty = does not apply).

    ``lead``: columns before the level's identity columns (``query --every`` puts ``period`` there); a lead
    column holding times is written as ISO UTC like the interval bounds.  ``offsets``: seconds east of UTC per
    row of a time column (:func:`zone_times`): the cell carries its offset (``2026-03-29T03:00:00+02:00``).
    """
    offsets = offsets or {}
    cols = list(lead) + csv_columns(by, ids)
    times = {"interval_start", "interval_end", *(c for c in lead if c not in ("hour", "weekday", "rank"))}
    out = [csv_line(cols)]
    data = {c: (m[c].tolist() if c in m.columns else [None] * len(m)) for c in cols}
    for i in range(len(m)):
        row = []
        for c in cols:
            v = data[c][i]
            if c in times:
                row.append(_iso(v, offsets[c][i] if c in offsets else None))
            elif c in ("cpu", "n_cpus", "hour", "rank", "left_out") and _csv_cell(v):
                row.append(str(int(v)))
            else:
                row.append(_csv_cell(v))
        out.append(csv_line(row))
    return "".join(out)


def to_json(ws, m: pd.DataFrame, by: str, ids: list[str], args: argparse.Namespace,
            lead: tuple[str, ...] = (), offsets: dict | None = None, zone: dict | None = None) -> str:
    """Metrics frame -> the JSON report document (``lead``: columns before the level's, as in :func:`to_csv`;
    ``offsets`` as there; ``zone``: the time-zone facts for ``meta.tz``)."""
    cols = list(lead) + csv_columns(by, ids)
    offsets = offsets or {}
    rows = []
    for i, rec in enumerate(m.to_dict("records")):
        r = {}
        for c in cols + ["summary"]:
            v = rec.get(c)
            r[c] = (_iso(v, offsets[c][i] if c in offsets else None) or None) \
                if c in ("interval_start", "interval_end") else _num(v)
        rows.append(r)
    window = {"from": _iso(args.start) or None, "to": _iso(args.end) or None,
              "first": _iso(m["interval_start"].min()) or None if len(m) else None,
              "last": _iso(m["interval_end"].max()) or None if len(m) else None}
    doc = {"meta": {"files": _files_meta(ws),
                    "formula_sets": ws.formula_versions(), "statuses": ws.statuses(), "window": window,
                    "level": by, "formulas_file": args.formulas,
                    "left_out": int(m["left_out"].sum()) if "left_out" in m.columns and len(m) else 0,
                    "keep_implausible": bool(getattr(args, "keep_implausible", False)),
                    "shift": {"hours": getattr(args, "hours", None), "days": getattr(args, "days", None)},
                    **({"tz": zone} if zone is not None else {})},
           "rows": rows, "findings": [f.to_dict() for f in ws.findings]}
    return json_text(json.dumps(doc, indent=1, allow_nan=False, default=str)) + "\n"


def _files_meta(ws) -> list[dict]:
    return [{"file": r.file, "kind": r.kind, "framing": r.framing, "records": r.records} for r in ws.files]


NA = MISSING    # a value that does not apply or cannot be computed, written the same way in every table


_fmt = display      # the one display form of a table value (app.engine.layout), the window's and the exports' too


def to_table(ws, m: pd.DataFrame, by: str, width: int = TABLE_WIDTH, lead: tuple[str, ...] = (),
             zone: str = "UTC") -> str:
    """Metrics frame -> fixed-width text in IBM presentation order, fitted to ``width`` columns.

    Generations whose presentations have different columns (z10's L15P/L2LP/L2RP against the
    L2P..L4RP of z196 and later) get one table each, as IBM's charts show them.
    """
    from app.engine.layout import presentation_columns

    vers = ws.formula_versions()
    parts = m.loc[m["data"] == "partition data only"] if "data" in m.columns else m.iloc[:0]
    if len(parts):
        m = m.drop(index=parts.index)
    present = set(m["generation"]) if len(m) else set()
    gens = [g for g in vers if g in present] or list(vers)[:1]
    lines = [f"NestScope report, level {by}, {len(m)} row(s), times {zone}"]
    tail = partition_table(pd.concat([m, parts]) if len(parts) else m)
    if not len(m):
        return "\n".join(lines + _formula_lines(ws, gens) + ["(no intervals in the window)"] + tail) + "\n"
    groups: dict[tuple[str, ...], tuple[list, list[str]]] = {}
    for g in gens:
        main = [s for s in presentation_columns(g, ws.formula_sets) if s.group in ("Main", "Hint")]
        groups.setdefault(tuple(s.id for s in main), (main, []))[1].append(g)
    for k, (main, members) in enumerate(groups.values()):
        if k:
            lines.append("")
        lines += _formula_lines(ws, members)
        sub = m[m["generation"].isin(members)]
        lines += _table_block(sub, by, main, width, show_cec=m["cec"].nunique() > 1, lead=lead)
    lines += _coverage_lines(m, by) + tail
    return "\n".join(lines) + "\n"


def _coverage_lines(m: pd.DataFrame, by: str) -> list[str]:
    if "coverage_note" not in m.columns:
        return []
    notes = m.loc[m["coverage_note"].fillna("").astype(str) != ""]
    out = []
    for r in notes.to_dict("records"):
        name = {"cec": "CEC {cec}", "lpar": "LPAR {lpar} ({cec})", "class": "{lpar} {class} ({cec})"}[by].format(**r)
        out.append(display_text(f"* coverage {float(r['coverage_pct']):.0f}%: {name} {r['coverage_note']}"))
    return (["", "Rows whose parts cover different times (a step in a timeline is not a workload change):"] + out) \
        if out else []


def partition_table(m: pd.DataFrame) -> list[str]:
    """Every partition of the machine as its partition data (z/VM D0R16) shows it, counters or not."""
    if "processors" not in m.columns:
        return []
    p = m.loc[m["processors"].notna()]
    if not len(p):
        return []
    heads = ["LPAR", "Data", "#CPU", "Processors", "Weights", "Capped", "Busy%sum", "Busy%/CPU"]
    rows = [[display_text(r["lpar"]), str(r["data"]), str(int(r["partition_cpus"])), display_text(r["processors"]),
             display_text(r["weights"]),
             "yes" if bool(r["capped"]) else "no",
             _fmt(r["partition_busy_sum_pct"], 1), _fmt(r["partition_busy_per_cpu_pct"], 1)]
            for r in p.sort_values(["cec", "lpar"]).to_dict("records")]
    if p["cec"].nunique() > 1:
        heads = ["CEC"] + heads
        rows = [[display_text(c)] + r for c, r in zip(p.sort_values(["cec", "lpar"])["cec"], rows)]
    w = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(heads)]
    right = {"#CPU", "Busy%sum", "Busy%/CPU"}
    fmt = [(">" if h in right else "<") for h in heads]
    lines = ["", "Partition data (z/VM D0R16) of every partition; #CPU = logical CPUs of all processor types; "
             "Busy%sum = % of one CPU summed over the LPAR's CPUs (as LPARCPU), Busy%/CPU = average per CPU:"]
    lines.append(" ".join(f"{h:{a}{x}}" for h, a, x in zip(heads, fmt, w)).rstrip())
    lines += [" ".join(f"{c:{a}{x}}" for c, a, x in zip(r, fmt, w)).rstrip() for r in rows]
    return lines


def _views(ws, args: argparse.Namespace, shift, tz: str = "utc"):
    """A profile (--by hour|weekday|hour-weekday), the CEC pools (--by pool) or a top list (--top N --metric M):
    ``(frame, level for the columns, lead columns)``; an exit code for a usage error; None for the other reports."""
    from app.engine import views

    top, metric = getattr(args, "top", None), getattr(args, "metric", None)
    if top is not None or metric is not None:
        if top is None or metric is None or top < 1:
            print("nestscope report: error: --top N and --metric NAME go together (N >= 1)", file=sys.stderr)
            return EXIT_USAGE
        if args.by not in ("cec", "lpar", "class", "cpu"):
            print("nestscope report: error: --top ranks the intervals of --by cec, lpar, class or cpu",
                  file=sys.stderr)
            return EXIT_USAGE
        try:
            m = views.peaks(ws, metric, level=args.by, top=top, start=args.start, end=args.end, shift=shift,
                            tz=tz)
        except KeyError:
            from app.engine.metrics import metric_ids
            print(f"nestscope report: error: --metric {metric}: not a metric (one of "
                  f"{', '.join(metric_ids(ws.formula_sets))})", file=sys.stderr)
            return EXIT_USAGE
        return m, {"class": "interval"}.get(args.by, args.by), ("rank", "interval_end", "hour")
    if args.by in PROFILE_BY:
        m = views.profile(ws, by=args.by, level=args.level, start=args.start, end=args.end, shift=shift, tz=tz)
        return m, args.level, tuple(c for c in ("weekday", "hour") if c in m.columns)
    if args.by == "pool":
        return views.pools(ws, start=args.start, end=args.end, shift=shift), "class", ()
    return None


def _formula_lines(ws, gens: list[str]) -> list[str]:
    out = []
    for g in gens:
        fs = ws.formula_sets[g]
        rni = fs.metrics.get("RNI")
        note = "" if rni is None else (f"; RNI {rni.status}" if rni.expr else "; RNI: no formula (shown n/a)")
        out.append(f"Formula set {fs.version}{note}")
    return out


def _table_block(m: pd.DataFrame, by: str, main: list, width: int, show_cec: bool,
                 lead: tuple[str, ...] = ()) -> list[str]:
    """Rows of one generation group; ``main`` are the group's Main/Hint :class:`ColumnSpec` s; ``lead``: columns
    before the node's (a profile's weekday and hour, a top list's rank and interval)."""
    ident = {"cpu": ["lpar", "class", "cpu"], "interval": ["lpar", "class"], "class": ["lpar", "class"],
             "lpar": ["lpar"], "cec": ["cec"]}[by]
    if by != "cec" and show_cec:
        ident = ["cec"] + ident
    heads = {"lpar": "LPAR", "class": "Class", "cpu": "CPU", "cec": "CEC"}
    cols: list[tuple[str, list[str], str]] = []     # (header, cells, align)
    recs = m.to_dict("records")
    for c in lead:
        cells = [pd.Timestamp(r[c]).strftime("%Y-%m-%d %H:%M") if c == "interval_end" else display_text(r[c])
                 for r in recs]
        cols.append(({"interval_end": "Interval end"}.get(c, c.capitalize()), cells,
                     ">" if c in ("rank", "hour") else "<"))
    for c in ident:
        cols.append((heads[c], [display_text(r[c]) for r in recs], "<"))
    if by in ("cpu", "interval"):
        cols.append(("Interval end", [("total " if r.get("summary") else "")
                                      + pd.Timestamp(r["interval_end"]).strftime("%Y-%m-%d %H:%M") for r in recs], "<"))
    else:
        cols.append(("#CPU", [str(int(r["n_cpus"])) for r in recs], ">"))
    for s in main:
        cols.append((s.header, [_fmt(r.get(s.id), s.decimals) for r in recs], ">"))
    # the presentation's header names (as the window shows them), on two lines where a name is wider than its
    # numbers; every column of the layout at every level (nothing is dropped to fit a width)
    heads2 = [_two_lines(h, max((len(x) for x in cells), default=0)) for h, cells, _ in cols]
    widths = [max(len(h1), len(h2), *(len(x) for x in cells)) for (h1, h2), (_, cells, _) in zip(heads2, cols)]
    out = [" ".join(f"{h[0]:{a}{w}}" for h, (_, _, a), w in zip(heads2, cols, widths)).rstrip(),
           " ".join(f"{h[1]:{a}{w}}" for h, (_, _, a), w in zip(heads2, cols, widths)).rstrip()]
    for i in range(len(recs)):
        out.append(" ".join(f"{cells[i]:{a}{w}}" for (_, cells, a), w in zip(cols, widths)).rstrip())
    return out


def _two_lines(header: str, width: int) -> tuple[str, str]:
    """A header as (first line, second line): one line when it fits ``width``, else split at the space that
    makes the wider line narrowest ("Est Instr Cmplx CPI" -> "Est Instr", "Cmplx CPI")."""
    words = header.split()
    if len(header) <= max(width, 4) or len(words) < 2:
        return "", header
    best = min(range(1, len(words)), key=lambda k: max(len(" ".join(words[:k])), len(" ".join(words[k:]))))
    return " ".join(words[:best]), " ".join(words[best:])


# ------------------------------------------------------------------ SMT reports
# (column, table header, decimals) in SMTMET order
_SMT_TABLE = {
    "type": [("seconds", "Seconds", 0), ("cores", "Cores", 0), ("productivity", "Prod%", 1),
             ("capacity_factor", "CF%", 1), ("max_capacity_factor", "MaxCF%", 1), ("mt_utilization", "MTUtil%", 1),
             ("thread_density", "ThrDens", 2), ("source", "Source", None)],
    "core": [("seconds", "Seconds", 0), ("productivity", "Prod%", 1), ("mt_utilization", "MTUtil%", 1),
             ("thread_density", "ThrDens", 2), ("core_busy", "CoreBusy%", 1), ("source", "Source", None)],
}


def smt_columns(level: str) -> list[str]:
    """CSV/JSON column order of an SMT report (``level`` "type" or "core")."""
    from app.engine.smt_report import CORE_COLUMNS, TYPE_COLUMNS

    return list(TYPE_COLUMNS if level == "type" else CORE_COLUMNS)


def _smt_cell(c: str, v: Any, off: float | None = None) -> Any:
    if c == "interval_end":
        return _iso(v, off) or None
    if c == "mean":
        return bool(v)
    return _num(v)


def smt_to_csv(m: pd.DataFrame, level: str, offsets: dict | None = None) -> str:
    """SMT frame -> CSV text (full precision, ISO times with their offset, empty = not known; mean as
    true/false)."""
    cols = smt_columns(level)
    off = (offsets or {}).get("interval_end")
    out = [csv_line(cols)]
    for i, rec in enumerate(m[cols].to_dict("records")):
        out.append(csv_line([_csv_cell(_smt_cell(c, rec[c], None if off is None else off[i])) for c in cols]))
    return "".join(out)


def smt_to_json(ws, m: pd.DataFrame, level: str, args: argparse.Namespace, offsets: dict | None = None,
                zone: dict | None = None) -> str:
    """SMT frame -> ``{"meta": {files, window, level, tz}, "rows": [...], "findings": [...]}``."""
    cols = smt_columns(level)
    off = (offsets or {}).get("interval_end")
    rows = [{c: _smt_cell(c, rec[c], None if off is None else off[i]) for c in cols}
            for i, rec in enumerate(m[cols].to_dict("records"))]
    ends = m["interval_end"].dropna() if len(m) else pd.Series(dtype="datetime64[ns]")
    window = {"from": _iso(args.start) or None, "to": _iso(args.end) or None,
              "last": (_iso(ends.max()) or None) if len(ends) else None}
    doc = {"meta": {"files": _files_meta(ws),
                    "window": window, "level": args.by, **({"tz": zone} if zone is not None else {}),
                    "units": {"productivity": "%", "capacity_factor": "%", "max_capacity_factor": "%",
                              "mt_utilization": "%", "core_busy": "%", "thread_density": "threads",
                              "seconds": "s"}},
           "rows": rows, "findings": [f.to_dict() for f in ws.findings]}
    return json_text(json.dumps(doc, indent=1, allow_nan=False, default=str)) + "\n"


def smt_to_table(m: pd.DataFrame, level: str, zone: str = "UTC") -> str:
    """SMT frame -> fixed-width text in SMTMET column order (mean rows labelled ``mean``)."""
    what = "core type" if level == "type" else "core"
    lines = [f"NestScope multithreading (SMT) report by {what}, {len(m)} row(s), times {zone}; "
             "productivity, CF, MT util, core busy in %; source: reported (z/VM D0R2) / derived (counters)"]
    if not len(m):
        return "\n".join(lines + ["(no multithreading data in the window)"]) + "\n"
    recs = m.to_dict("records")
    cols: list[tuple[str, list[str], str]] = []
    if m["cec"].nunique() > 1:
        cols.append(("CEC", [display_text(r["cec"]) for r in recs], "<"))
    cols.append(("LPAR", [display_text(r["lpar"]) for r in recs], "<"))
    cols.append(("Interval end", ["mean" if r.get("mean") else pd.Timestamp(r["interval_end"]).strftime("%m-%d %H:%M")
                                  for r in recs], "<"))
    if level == "core":
        cols.append(("Core", [str(int(r["core_id"])) for r in recs], ">"))
    cols.append(("Type", [display_text(r["core_type"]) for r in recs], "<"))
    for c, head, dec in _SMT_TABLE[level]:
        cells = [str(r[c]) if dec is None else _fmt(r[c], dec) for r in recs]
        cols.append((head, cells, "<" if dec is None else ">"))
    widths = [max(len(h), *(len(x) for x in cells)) for h, cells, _ in cols]
    lines.append(" ".join(f"{h:{a}{w}}" for (h, _, a), w in zip(cols, widths)).rstrip())
    for i in range(len(recs)):
        lines.append(" ".join(f"{cells[i]:{a}{w}}" for (_, cells, a), w in zip(cols, widths)).rstrip())
    return "\n".join(lines) + "\n"


def _findings_line(ws) -> str:
    sev = pd.Series([f.severity for f in ws.findings], dtype=object).value_counts().to_dict()
    if not sev:
        return ""
    return "findings: " + ", ".join(f"{v} {k}" for k, v in sev.items()) + " (details: --format json or nestscope info)\n"


def run(args: argparse.Namespace, workspace=None) -> int:
    """Read the files, compute the metrics, print; returns the exit code.

    ``workspace`` (a ready :class:`app.engine.Workspace`) skips reading ``args.files``.
    """
    from app.engine import FormulaFileError
    from app.engine.metrics import metric_ids

    from app.analysis.selection import window_problem

    if window_problem(args.start, args.end):
        print(f"nestscope report: error: {window_problem(args.start, args.end)}", file=sys.stderr)
        return EXIT_USAGE
    from app.engine.shift import ShiftError, make_shift, shifted_metrics

    try:
        shift = make_shift(getattr(args, "hours", None), getattr(args, "days", None))
    except ShiftError as exc:
        print(f"nestscope report: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    if shift is not None and args.by in SMT_BY:
        print("nestscope report: error: --hours/--days do not apply to the SMT reports", file=sys.stderr)
        return EXIT_USAGE
    ws = workspace
    if ws is None:
        from app.analysis import load

        try:
            loaded = load(args.files, args.formulas, getattr(args, "keep_implausible", False))
        except FormulaFileError as exc:
            print(f"nestscope report: error: --formulas {exc}", file=sys.stderr)
            return EXIT_USAGE
        ws, read = loaded.workspace, loaded.read
        messages = read.messages if read.readable else read.messages + read.nothing_readable()
        from app.commands.compare import say

        say("report", messages)
        if not read.readable:
            return EXIT_NOTHING
    tz = getattr(args, "tz", None) or ws.zones.default()
    if shift is not None and shift.tz != tz:          # --hours/--days are read in the zone of the times shown
        shift = dataclasses.replace(shift, tz=tz)
    smt = SMT_BY.get(args.by)
    lead: tuple[str, ...] = ()
    by = args.by
    views = _views(ws, args, shift, tz)
    if isinstance(views, int):
        return views
    if views is not None:
        m, by, lead = views
    elif smt is not None:
        m = ws.smt(by=smt, start=args.start, end=args.end)
    else:
        m = enrich(ws, shifted_metrics(ws, by=args.by, start=args.start, end=args.end, shift=shift), args.by,
                   args.start, args.end)
    ids = metric_ids(ws.formula_sets)
    tz, offs, label = zone_times(ws, tz, m)
    zone = zone_meta(ws, tz, label)
    if smt is not None:
        if args.format == "csv":
            text = smt_to_csv(m, smt, offs)
        elif args.format == "json":
            text = smt_to_json(ws, m, smt, args, offs, zone)
        else:
            text = smt_to_table(shown_in_zone(m, offs), smt, label) + _findings_line(ws)
    elif args.format == "csv":
        text = to_csv(m, by, ids, lead, offs)
    elif args.format == "json":
        text = to_json(ws, m, by, ids, args, lead, offs, zone)
    else:
        text = to_table(ws, shown_in_zone(m, offs), by, lead=lead, zone=label) + _findings_line(ws) \
            + left_out_line(ws, m)
    if args.format == "table":
        text = terminal_text(text)      # a guard over every line: nothing from the data acts on the terminal
    if args.out:        # never over an input file, never half-written
        from app.export import ExportError, write_text

        try:
            write_text(args.out, text, list(args.files))
        except ExportError as exc:
            print(f"nestscope report: error: {exc}", file=sys.stderr)
            return EXIT_USAGE
    else:
        sys.stdout.write(text)
    return EXIT_OK
