"""``nestscope sample --out DIR``: write the bundled sample set (or a bigger one)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("sample", help="write the sample data set (SMF 113 and MONWRITE files made by the "
                       "workload model), e.g. to try NestScope or to make bigger test sets")
    p.add_argument("--out", required=True, type=Path, help="directory to write into (created if missing)")
    p.add_argument("--days", type=int, default=2, help="days of 15-minute z/OS data (default 2)")
    p.add_argument("--zvm-minutes", type=int, default=1440,
                   help="one-minute z/VM monitor intervals (default 1440 = one day)")


def run(args: argparse.Namespace) -> int:
    from app.sample.build import write_sample_set

    if args.days < 1 or args.zvm_minutes < 2:
        print("nestscope sample: --days must be >= 1 and --zvm-minutes >= 2", file=sys.stderr)
        return 2
    try:
        paths = write_sample_set(args.out, days=args.days, zvm_intervals=args.zvm_minutes)
    except OSError as exc:
        print(f"nestscope sample: cannot write to {args.out}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    for p in paths:
        print(f"{p}  {p.stat().st_size:,} bytes")
    return 0
