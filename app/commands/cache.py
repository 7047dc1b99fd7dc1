"""``nestscope cache info|clear``: what the workspace cache holds, and emptying it."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import sys


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("cache", help="show or clear the workspace cache (decoded files kept for a fast reopen)",
                       description="The workspace cache keeps decoded files (and their intervals) as Parquet in "
                                   "your cache folder, so opening them again skips decoding. An entry is used only "
                                   "while the file's path, size and modification time and NestScope's reader "
                                   "version are unchanged; deleting the folder is always safe.")
    p.add_argument("action", choices=["info", "clear"], help="info: folder, size, cap and entries; clear: remove "
                   "every entry")
    p.add_argument("--format", choices=["text", "json"], default="text", help="output of info (default text)")


def _mb(n: int) -> str:
    return f"{n / 1e6:,.1f} MB"


def run(args: argparse.Namespace) -> int:
    from app.cache import default_cache

    c = default_cache()
    if c is None:
        print("nestscope cache: the workspace cache is turned off (NESTSCOPE_CACHE=0)")
        return 0
    if args.action == "clear":
        n = c.clear()
        print(f"removed {n} entr{'y' if n == 1 else 'ies'} from {c.dir}")
        return 0
    info = c.info()
    if args.format == "json":
        json.dump({"directory": info.directory, "entries": info.entries, "bytes": info.bytes,
                   "max_bytes": info.max_bytes, "items": info.items}, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    print(f"cache folder: {info.directory}")
    print(f"entries: {info.entries}, {_mb(info.bytes)} of {_mb(info.max_bytes)} "
          "(cap: NESTSCOPE_CACHE_MAX_MB; least recently used entries go first)")
    for it in info.items:
        when = dt.datetime.fromtimestamp(it["last_used"]).strftime("%Y-%m-%d %H:%M") if it["last_used"] else "-"
        what = {"read": "decoded file", "iv": "intervals", "wm": "tree figures"}.get(it["kind"], it["kind"])
        state = "" if it["complete"] else " (incomplete: removed on the next clean-up)"
        print(f"  {when}  {_mb(it['bytes']):>11}  {what:<12} {it['file']}{state}")
    return 0
