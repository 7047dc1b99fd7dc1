"""``nestscope extract FILE... --to DATASET``: append decoded counter samples to a fleet dataset.

Each file is read once (SMF 113, MONWRITE, gzip of either), its counter samples and the engine's interval
deltas are written as Parquet parts (Hive-partitioned by CEC and month) and its manifest entry (name, size,
SHA-256, records, time range, findings) commits them.  A file whose content is already in the dataset adds
nothing.  Exit codes: 0 something was added or was already there, 2 usage error, 3 nothing readable.
"""

from __future__ import annotations

import argparse
import os
import sys

from app.textsafe import display_text

EXIT_OK, EXIT_USAGE, EXIT_NOTHING = 0, 2, 3


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("extract", help="append the counter samples of files to a Parquet fleet dataset",
                       description="Append the decoded counter samples of SMF 113 / MONWRITE files to a "
                                   "Hive-partitioned Parquet dataset (cec=/month=) with a manifest of every "
                                   "source file. The same content twice adds nothing; concurrent extracts are safe.")
    p.add_argument("files", nargs="+", metavar="FILE", help="SMF or MONWRITE file (gzip allowed)")
    p.add_argument("--to", dest="dataset", required=True, metavar="DATASET", help="dataset directory (created)")
    p.add_argument("--quiet", action="store_true", help="print only the summary line")
    return p


def run(args: argparse.Namespace) -> int:
    from app.dataset import Dataset, DatasetError

    try:
        ds = Dataset(args.dataset, create=True)
    except (DatasetError, OSError) as exc:
        print(f"nestscope extract: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    counts = {"added": 0, "present": 0, "unreadable": 0, "error": 0}
    samples = intervals = 0
    for path in args.files:
        try:
            r = ds.extract(path)
        except Exception as exc:       # a machine problem (disk full...): this file added nothing
            name = os.fsencode(path).decode("utf-8", "backslashreplace")       # printable even when not UTF-8
            print(display_text(f"nestscope extract: {name}: not added ({type(exc).__name__}: {exc})"), file=sys.stderr)
            counts["error"] += 1
            continue
        counts[r.status] += 1
        samples += r.samples
        intervals += r.intervals
        out = sys.stderr if r.status in ("unreadable", "error") else sys.stdout
        if not args.quiet or out is sys.stderr:
            print(display_text(f"[{r.status}] {r.message}"), file=out)   # names from the data: escaped
    if ds.cleaned:
        print(f"{args.dataset}: removed {len(ds.cleaned)} leftover file(s) of interrupted extracts (an hour old "
              "or more, listed by no manifest entry)", file=sys.stderr)
    print(f"{args.dataset}: {counts['added']} file(s) added ({samples:,} samples, {intervals:,} intervals), "
          f"{counts['present']} already present, {counts['unreadable']} without counter data, "
          f"{counts['error']} failed")
    return EXIT_OK if counts["added"] or counts["present"] else EXIT_NOTHING
