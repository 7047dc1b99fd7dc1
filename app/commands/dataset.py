"""``nestscope dataset compact|check|vacuum DATASET``: upkeep of a fleet dataset made by ``nestscope extract``.

* ``compact`` merges the small part files of each partition (table, CEC, month) into parts of tens of MB
  (:mod:`app.dataset.compact`); queries give the same answers before and after.  ``extract`` does it by itself
  for a partition it wrote to once that partition holds many small parts.
* ``check`` reads every manifest entry and part file and lists what is wrong: damaged entries, missing or damaged
  parts (size and CRC-32), orphans of killed extracts, stale compaction records.  Exit 0 when nothing is, 1 when
  something is.
* ``vacuum`` removes the orphans (files no manifest entry or compaction record lists) last written
  ``--min-age`` seconds ago or more (default 0: run it when no extract writes to the dataset).

Exit codes: 0 ok, 1 ``check`` found problems, 2 usage error (not a dataset).
"""

from __future__ import annotations

import argparse
import os
import sys

from app.textsafe import display_text

EXIT_OK, EXIT_PROBLEMS, EXIT_USAGE = 0, 1, 2


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser("dataset", help="compact, check or vacuum a fleet dataset",
                       description="Upkeep of a fleet dataset made by `nestscope extract`: compact merges small part "
                                   "files into files of tens of MB (answers unchanged), check lists damaged entries, "
                                   "missing or damaged parts and orphans of killed extracts, vacuum removes orphans.")
    p.add_argument("action", choices=("compact", "check", "vacuum"), help="what to do")
    p.add_argument("dataset", metavar="DATASET", help="dataset directory")
    p.add_argument("--min-age", type=float, default=0.0, metavar="SECONDS",
                   help="check/vacuum: only orphans last written this long ago (default 0; an extract running "
                        "meanwhile writes parts that are orphans until it commits)")
    return add_quiet(p)


def add_quiet(p: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """``--quiet`` of the dataset commands (``dataset``, ``extract``); returns ``p``."""
    p.add_argument("--quiet", action="store_true", help="print only the summary line")
    return p


def open_dataset(path: str, command: str, create: bool = False, writable: bool = False):
    """The :class:`app.dataset.Dataset` at ``path`` for ``nestscope COMMAND`` (``extract`` creates it and adds to
    it: ``writable``, an older format is read, never added to), or None once the reason it cannot be used is
    printed (``nestscope COMMAND: error: ...``): the caller exits 2."""
    from app.dataset import Dataset, DatasetError

    try:
        ds = Dataset(path, create=create)
        if writable:
            ds.check_writable()        # its parts would mix two schemas in one table
        return ds
    except (DatasetError, OSError) as exc:
        print(f"nestscope {command}: error: {exc}", file=sys.stderr)
        return None


TABLES = ("samples", "intervals", "partitions")     # every table check reads and compact merges


def run(args: argparse.Namespace) -> int:
    from app.dataset.lock import DatasetLocked

    ds = open_dataset(args.dataset, "dataset")
    if ds is None:
        return EXIT_USAGE
    try:
        if args.action == "check":           # reads only: no lock
            return _run(ds, args)
        with ds.lock():                      # compact and vacuum rewrite and remove files: one writer at a time
            return _run(ds, args)
    except DatasetLocked as exc:
        print(f"nestscope dataset: error: {exc}", file=sys.stderr)
        return EXIT_USAGE


def _run(ds, args: argparse.Namespace) -> int:
    from app.dataset import compact as comp

    if args.action == "compact":
        say = None if args.quiet else (lambda m: print(display_text(m)))
        before = _count(ds)
        done = comp.compact(ds, progress=say)
        ds.save_index()
        after = _count(ds)
        print(f"{args.dataset}: {len(done)} merged part(s) written; part files {before[0]:,} -> {after[0]:,}, "
              f"{before[1] / 1e6:,.1f} MB -> {after[1] / 1e6:,.1f} MB")
        return EXIT_OK
    if args.action == "check":
        found = comp.check(ds, args.min_age)
        ds.save_index()
        for f in found:
            if not args.quiet:
                print(display_text(f"{f.severity}: {f.message}"))
        n_parts = sum(len(ds.parts(t)) for t in TABLES)
        print(f"{args.dataset}: {len(ds.index.sound())} manifest entries, {n_parts:,} part files read; "
              f"{len(found)} problem(s)" + ("" if not found else " (`nestscope dataset vacuum` removes orphans)"))
        return EXIT_PROBLEMS if found else EXIT_OK
    gone = comp.vacuum(ds, args.min_age)
    for p in gone:
        if not args.quiet:
            print(display_text(f"removed {p}"))
    print(f"{args.dataset}: removed {len(gone)} orphan file(s)")
    return EXIT_OK


def _count(ds) -> tuple[int, int]:
    n = size = 0
    for t in TABLES:
        for p in ds.parts(t):
            n += 1
            try:
                size += os.stat(p).st_size
            except OSError:
                pass
    return n, size
