"""``nestscope extract FILE... --to DATASET``: append decoded counter samples to a fleet dataset.

Each file is read once (SMF 113, MONWRITE, gzip of either), its counter samples and the engine's interval
deltas are written as Parquet parts (Hive-partitioned by CEC and month) and its manifest entry (name, size,
SHA-256, records, time range, findings) commits them.  A file whose content is already in the dataset adds
nothing, and a sample or interval the dataset holds already (the same data in another file: a gunzipped copy,
an overlapping dump) is not added again (app/dataset/dedup.py).  A large plain SMF file is decoded and written a
chunk of records at a time (``NESTSCOPE_EXTRACT_CHUNK_MB``, default 32 MB of input; app/formats/chunks.py).
Concurrent extracts into one dataset take turns (the dataset lock, app/dataset/lock.py; a waiting extract says
which process holds it).  Exit codes: 0 something was added or was already there, 2 usage error, 3 nothing
readable.
"""

from __future__ import annotations

import argparse
import os
import sys

from app.commands.dataset import add_quiet, open_dataset
from app.textsafe import display_text

EXIT_OK, EXIT_USAGE, EXIT_NOTHING = 0, 2, 3


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("extract", help="append the counter samples of files to a Parquet fleet dataset",
                       description="Append the decoded counter samples of SMF 113 / MONWRITE files to a "
                                   "Hive-partitioned Parquet dataset (cec=/month=) with a manifest of every "
                                   "source file. Every sample and interval is kept once, whatever files bring it (overlapping or "
                                   "re-sent dumps, running totals in any order); concurrent extracts are safe.")
    p.add_argument("files", nargs="+", metavar="FILE", help="SMF or MONWRITE file (gzip allowed)")
    p.add_argument("--to", dest="dataset", required=True, metavar="DATASET", help="dataset directory (created)")
    p.add_argument("--keep-samples", action="store_true",
                   help="keep every counter of every sample as read in the samples table (default: only the "
                        "counters the intervals are computed from; queries read the intervals table only)")
    return add_quiet(p)


def run(args: argparse.Namespace) -> int:
    ds = open_dataset(args.dataset, "extract", create=True, writable=True)
    if ds is None:
        return EXIT_USAGE
    ds.keep_samples = bool(getattr(args, "keep_samples", False))
    counts = {"added": 0, "present": 0, "unreadable": 0, "error": 0}
    samples = intervals = 0
    results = []
    for path in args.files:
        try:
            r = ds.extract(path)
        except Exception as exc:       # a machine problem (disk full...): this file added nothing
            name = os.fsencode(path).decode("utf-8", "backslashreplace")       # printable even when not UTF-8
            print(display_text(f"nestscope extract: {name}: not added ({type(exc).__name__}: {exc})"), file=sys.stderr)
            counts["error"] += 1
            continue
        counts[r.status] += 1
        results.append(r)
        samples += r.samples
        intervals += r.intervals
        out = sys.stderr if r.status in ("unreadable", "error") else sys.stdout
        if not args.quiet or out is sys.stderr:
            print(display_text(f"[{r.status}] {r.message}"), file=out)   # names from the data: escaped
    _upkeep(ds, results, args.quiet)
    if ds.cleaned:
        print(f"{args.dataset}: removed {len(ds.cleaned)} leftover file(s) of interrupted extracts (an hour old "
              "or more, listed by no manifest entry)", file=sys.stderr)
    print(f"{args.dataset}: {counts['added']} file(s) added ({samples:,} samples, {intervals:,} intervals), "
          f"{counts['present']} already present, {counts['unreadable']} without counter data, "
          f"{counts['error']} failed")
    return EXIT_OK if counts["added"] or counts["present"] else EXIT_NOTHING


def _upkeep(ds, results, quiet: bool) -> None:
    """After the files, under the dataset lock (compaction rewrites parts another extract may be looking up):
    the manifest index written once, the partitions written to compacted once they hold many small parts
    (:data:`app.dataset.compact.AUTO_MIN_PARTS`), the time-bucket cache of their CECs brought up to date (so the
    next query reads only its parts)."""
    from app.dataset import compact
    from app.dataset.lock import DatasetLocked
    from app.dataset.stats import refresh_stats

    touched = sorted({(rel.split("/", 1)[0], k.get("cec", ""), k.get("month", ""))
                      for r in results if r.status == "added" for rel, k in r.entry.get("part_keys", {}).items()})
    try:
        with ds.lock():
            ds.save_index()
            if touched:
                done = compact.compact(ds, touched, min_parts=compact.AUTO_MIN_PARTS)
                if done and not quiet:
                    print(f"{ds.root}: compacted {sum(len(r['replaces']) for r in done)} small part file(s) into "
                          f"{len(done)}")
                refresh_stats(ds, {c for _t, c, _m in touched})
                ds.save_index()
    except (OSError, DatasetLocked) as exc:      # the data is committed; only the upkeep failed (disk full...)
        print(f"nestscope extract: {ds.root}: upkeep after extract not done ({exc}); "
              "`nestscope dataset compact` does it later", file=sys.stderr)
