"""``nestscope info FILE... [--format text|json]``: what a file holds and what is wrong with it.

Findings are the reader's (framing, records, layout) and the engine's data-health findings over all the files
given together (counter resets, gaps, duplicates across files, lost data, CPUs that come and go), each with the
file and byte offset it concerns.

Exit codes: 0 when at least one file held counter samples or partition data,
3 when nothing readable was found, 2 for usage errors (argparse).
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from app.findings import Finding, make_finding
from app.formats.schema import ReadResult
from app.textsafe import display_text, json_text, terminal_text

EXIT_OK, EXIT_NOTHING = 0, 3


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register the ``info`` subcommand."""
    p = sub.add_parser("info", help="show framing, record counts, time range, machines, systems and findings",
                       description="Describe SMF 113 / MONWRITE files without computing metrics.")
    p.add_argument("files", nargs="+", metavar="FILE", help="SMF or MONWRITE file (gzip allowed)")
    p.add_argument("--format", choices=("text", "json"), default="text", help="output format (default text)")
    from app.commands.report import add_tz

    add_tz(p)
    return p


def summary(res: ReadResult, engine: list[Finding] | None = None) -> dict[str, Any]:
    """JSON-ready description of one read result; ``engine`` are the data-health findings about this file."""
    s = res.samples
    meta = res.meta or {}
    out: dict[str, Any] = {
        "file": res.file, "kind": res.kind, "framing": res.framing,
        "size": None if any(f.code in ("unreadable-file", "not-a-file") for f in res.findings) else res.size,
        "records": dict(res.records), "samples": int(len(s)),
        "partitions": int(len(res.partitions)) if res.partitions is not None else 0,
        "time_range": None, "machines": [], "systems": [], "classes": {},
        "findings": [{"offset": f.offset, "severity": f.severity, "code": f.code, "message": f.message,
                      "origin": origin}
                     for origin, fs in (("reader", res.findings), ("engine", engine or [])) for f in fs],
    }
    if res.partitions is not None and len(res.partitions):
        p = res.partitions
        measured = set(s["lpar"].astype(str)) if len(s) else set()
        out["partition_lpars"] = [{"lpar": str(name), "counters": str(name) in measured}
                                  for name in sorted(p["lpar"].astype(str).unique())]
    other = meta.get("type_counts") or meta.get("other_records") or {}
    out["other_types"] = {str(k): int(v) for k, v in sorted(other.items(), key=lambda kv: _type_key(kv[0]))
                          if str(k) != "113" and v}
    if len(s):
        out["time_range"] = [s["time"].min().isoformat(), s["time"].max().isoformat()]
        out["utc_offsets"] = _offsets(s)
        m = s.drop_duplicates("cec")[["cec", "machine_type", "model", "serial"]]
        out["machines"] = [{k: str(v) for k, v in r.items()} for r in m.to_dict("records")]
        out["systems"] = sorted(str(x) for x in s["system"].unique())
        cpus = s.drop_duplicates(["system", "class", "cpu"])
        out["classes"] = {str(k): int(v) for k, v in cpus.groupby("class", observed=True).size().items()}
    elif meta.get("time_range"):
        out["time_range"] = meta["time_range"]
    for k in ("machines", "systems"):
        if not out[k] and meta.get(k):
            out[k] = meta[k]
    return out


def _offsets(s) -> dict[str, list[str] | None]:
    """Each system's UTC offsets in time order as its records state them (None: not derivable, UTC)."""
    from app.engine.timezone import offset_text, record_offsets

    rec = record_offsets([s])
    out: dict[str, list[str] | None] = {str(x): None for x in s["system"].unique()}
    for name, g in rec.groupby("system", sort=True):
        out[str(name)] = [offset_text(o) for o in dict.fromkeys(g["offset_s"].tolist())]
    return dict(sorted(out.items()))


def _zoned_range(d: dict[str, Any], tz: str | None) -> str:
    """The time range line in the chosen zone (``local``: the file's own offsets; UTC where none is known)."""
    from app.engine.timezone import UTC, iso_time, offset_text

    a, b = (pd_ts(x) for x in d["time_range"])
    offs = [o for v in (d.get("utc_offsets") or {}).values() if v for o in v]
    if tz is None:
        tz = "local" if any(o != "UTC+00:00" for o in offs) else UTC
    if tz == UTC or (tz == "local" and not offs):
        return f"  time range: {d['time_range'][0]} .. {d['time_range'][1]} (UTC)"
    if tz == "local":
        def sec(o: str) -> int:
            sign = -1 if o[3] == "-" else 1
            return sign * (int(o[4:6]) * 3600 + int(o[7:9]) * 60)
        return (f"  time range: {iso_time(a, sec(offs[0]))} .. {iso_time(b, sec(offs[-1]))} "
                f"(local, {'/'.join(dict.fromkeys(offs))})")
    la, lb = (x.tz_localize("UTC").tz_convert(tz) for x in (a, b))
    return f"  time range: {la.isoformat()} .. {lb.isoformat()} ({tz}, {offset_text(la.utcoffset().total_seconds())})"


def pd_ts(text: str):
    import pandas as pd

    return pd.Timestamp(text)


def _health(results: list[ReadResult]) -> dict[str, list[Finding]]:
    """The engine's data-health findings over all readable files together, by the file they concern."""
    from app.analysis import new_workspace

    readable = [r for r in results if len(r.samples)]
    if not readable:
        return {}
    try:
        ws = new_workspace()
        found = ws.add_all(readable)
    except Exception as exc:  # noqa: BLE001 - an engine bug must not hide what the reader found
        names = ", ".join(r.file for r in readable)
        found = [make_finding(readable[0].file, None, "error", "engine-failure",
                              f"the data-health checks failed on {names} ({type(exc).__name__}: {exc})",
                              "the reader's findings are still shown; please report these files")]
    by_file: dict[str, list[Finding]] = {}
    known = {r.file for r in results}
    for f in found:
        by_file.setdefault(f.file if f.file in known else readable[0].file, []).append(f)
    return by_file


def _type_key(k: Any) -> tuple[int, str]:
    text = str(k)
    return (int(text), "") if text.isdigit() else (10**6, text)


def _text(d: dict[str, Any], tz: str | None = None) -> str:
    """The text form of :func:`summary`; every name from the data (and every finding, which may quote one) is
    shown by :func:`app.textsafe.display_text`, so it stays on its line and never acts on the terminal."""
    t = display_text
    size = "" if d["size"] is None else f"   size: {d['size']:,} bytes"      # None: the file could not be opened
    lines = [t(d['file']), f"  kind: {d['kind']}   framing: {d['framing']}{size}"]
    if d["records"]:
        lines.append("  records: " + ", ".join(f"{k} {v:,}" for k, v in d["records"].items()))
    if d.get("other_types"):
        label = "types" if d["kind"] == "smf" else "records"
        lines.append(f"  other {label}: " + ", ".join(f"{k}: {v:,}" for k, v in d["other_types"].items()))
    lines.append(f"  counter samples: {d['samples']:,}" + (f"   partition rows: {d['partitions']:,}"
                                                            if d["partitions"] else ""))
    if d["time_range"]:
        lines.append(_zoned_range(d, tz) if d.get("utc_offsets") is not None else
                     f"  time range: {d['time_range'][0]} .. {d['time_range'][1]} (UTC)")
    offs = d.get("utc_offsets") or {}
    if any(v != ["UTC+00:00"] for v in offs.values()):
        lines.append("  local time: " + ", ".join(f"{t(k)} " + (" -> ".join(v) if v else "not stated (UTC)")
                                                  for k, v in offs.items()))
    for m in d["machines"]:
        lines.append(f"  machine: {t(m.get('cec', ''))}  type {t(m.get('machine_type', ''))}  "
                     f"model {t(m.get('model', ''))}")
    if d["systems"]:
        lines.append("  systems: " + ", ".join(t(x) for x in d["systems"]))
    if d["classes"]:
        lines.append("  CPUs by class: " + ", ".join(f"{t(k)} {v}" for k, v in d["classes"].items()))
    if d.get("partition_lpars"):
        names = [t(p["lpar"]) + ("" if p["counters"] else " (partition data only)") for p in d["partition_lpars"]]
        lines.append("  partitions (D0R16): " + ", ".join(names))
    n_eng = sum(1 for f in d["findings"] if f.get("origin") == "engine")
    lines.append(f"  findings: {len(d['findings'])}" + (f" ({n_eng} from the data-health checks)" if n_eng else ""))
    for f in d["findings"]:
        lines.append(f"    [{f['severity']}] {t(f['message'])}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Read every file, print the description, return the exit code."""
    from app.analysis import failed_result, read_files

    # through the workspace cache (NESTSCOPE_CACHE=0 turns it off); a reader bug must not become a traceback
    results = read_files(args.files, cached=True, failed=lambda path, exc: failed_result(
        path, f"could not be read ({type(exc).__name__}: {exc})", "please report this file")).results
    engine = _health(results)
    descs = [summary(r, engine.get(r.file, [])) for r in results]
    if args.format == "json":
        sys.stdout.write(json_text(json.dumps(descs, indent=2, default=str)) + "\n")
    else:       # terminal_text: a guard over every line, nothing from the data acts on the terminal
        sys.stdout.write(terminal_text("\n\n".join(_text(d, getattr(args, "tz", None)) for d in descs)) + "\n")
    return EXIT_OK if any(r.readable for r in results) else EXIT_NOTHING
