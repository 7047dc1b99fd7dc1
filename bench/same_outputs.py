"""Do two checkouts print the same reports?  A behaviour check for refactoring moves (not a test).

    python bench/same_outputs.py /work/main .            # main's code against this worktree's
    python bench/same_outputs.py /work/main . lpar       # only the cases whose name holds "lpar"

Runs ``nestscope report`` (csv and table; --by lpar, class, cpu), ``compare`` (table, csv, json; by lpar and
class, with a shift) and ``export`` (csv; with and without a comparison) plus a few error cases (exit code and
stderr) on the bundled samples (``resources/samples``) with each checkout's ``app`` (PYTHONPATH), and prints
one line per case: same / DIFFERENT.  The workspace cache is off (NESTSCOPE_CACHE=0) so that both sides decode.
Exit code 0 when every case is byte-identical (stdout, stderr with the checkout's path removed, exit code).

Decks and workbooks (``export ... --out x.pptx|x.xlsx``: a comparison deck with and without a shift, one over the
same files with two shifts, the whole-sample deck, the comparison and plain workbooks) are compared part by part:
every part of the file, and every part of each embedded chart workbook, byte for byte, with only the times of the run in the
``docProps/core.xml`` parts (created, modified, last printed) left out.
"""

from __future__ import annotations

import io
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

SAMPLES = Path(__file__).resolve().parents[1] / "resources" / "samples"


def cases() -> list[tuple[str, list[str]]]:
    s = sorted(str(p) for p in SAMPLES.glob("*.gz"))
    zos = [p for p in s if "smf113" in p]
    before = [p for p in zos if "before_" in Path(p).name]
    after = [p for p in zos if "after_" in Path(p).name]
    out: list[tuple[str, list[str]]] = []
    for fmt in ("csv", "table"):
        for by in ("lpar", "class", "cpu"):
            out.append((f"report-{by}-{fmt}", ["report", *s, "--by", by, "--format", fmt]))
    out.append(("report-lpar-shift-table", ["report", *zos, "--hours", "08-17", "--days", "mon-fri"]))
    for by in ("lpar", "class"):
        for fmt in ("table", "csv", "json"):
            out.append((f"compare-{by}-{fmt}", ["compare", "--before", *before, "--after", *after, "--by", by,
                                                "--format", fmt]))
    out.append(("compare-shift", ["compare", "--before", *zos, "--after", *zos, "--before-hours", "08-17",
                                  "--after-hours", "22-06", "--before-lpar", "zosa", "--after-lpar", "ZOSA"]))
    out.append(("compare-unknown-lpar", ["compare", "--before", *before, "--after", *after,
                                         "--before-lpar", "NOPE"]))
    out.append(("compare-bad-shift", ["compare", "--before", *before, "--after", *after, "--hours", "25-99"]))
    out.append(("compare-bad-window", ["compare", "--before", *before, "--after", *after,
                                       "--before-from", "2026-01-02", "--before-to", "2026-01-01"]))
    out.append(("compare-nothing", ["compare", "--before", "/nonexistent.smf", "--after", *after]))
    out.append(("export-unknown-lpar", ["export", *zos, "--out", "{tmp}/x.csv", "--lpar", "NOPE"]))
    out.append(("export-nothing", ["export", "/nonexistent.smf", "--out", "{tmp}/x.csv"]))
    return out


def run(root: str, argv: list[str], tmp: str) -> tuple[int, bytes, bytes]:
    env = dict(os.environ, PYTHONPATH=str(Path(root).resolve()), NESTSCOPE_CACHE="0", COLUMNS="200")
    argv = [a.replace("{tmp}", tmp) for a in argv]
    p = subprocess.run([sys.executable, "-m", "app", *argv], capture_output=True, env=env, cwd=tmp, timeout=900)
    return p.returncode, p.stdout, p.stderr.replace(str(Path(root).resolve()).encode(), b"<root>")


_RUN_TIME = re.compile(rb"(<(?:dcterms:created|dcterms:modified|cp:lastPrinted)\b[^>]*>)[^<]*(</)")


def zip_parts(data: bytes, prefix: str = "") -> bytes:
    """A zip file (a deck or a workbook) as one text of its parts in name order, each part's bytes as they are,
    an embedded workbook's parts the same way, the run's time left out of ``docProps/core.xml``."""
    import zipfile

    out = []
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        for name in sorted(z.namelist()):
            body = z.read(name)
            if name.endswith(".xlsx"):
                body = zip_parts(body, prefix + name + "!")
            elif name.endswith("docProps/core.xml"):
                body = _RUN_TIME.sub(rb"\1<run time>\2", body)
            out.append(f"== {prefix}{name} ({len(body)} bytes)\n".encode() + body + b"\n")
    return b"".join(out)


def export_csv(root: str, argv: list[str], tmp: str) -> tuple[int, bytes, bytes]:
    code, out, err = run(root, argv, tmp)
    body = b""
    for target in sorted(Path(tmp).glob("out.*")):
        data = target.read_bytes()
        body += zip_parts(data) if target.suffix in (".pptx", ".xlsx") else data
        target.unlink()
    return code, out + body, err.replace(tmp.encode(), b"<tmp>")


def main() -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("a", help="a checkout (its app is put on PYTHONPATH)")
    ap.add_argument("b", help="the other checkout")
    ap.add_argument("only", nargs="?", default="", help="only the cases whose name holds this text")
    args = ap.parse_args()
    a, b, only = args.a, args.b, args.only
    s = sorted(str(p) for p in SAMPLES.glob("*.gz"))
    zos = [p for p in s if "smf113" in p]
    before = [p for p in zos if "before_" in Path(p).name]
    after = [p for p in zos if "after_" in Path(p).name]
    exports = [("export-csv", ["export", *zos, "--out", "{tmp}/out.csv"]),
               ("export-compare-csv", ["export", "--before", *before, "--after", *after, "--out", "{tmp}/out.csv"]),
               ("export-compare-pptx", ["export", "--before", *before, "--after", *after, "--out", "{tmp}/out.pptx"]),
               ("export-compare-shift-pptx", ["export", "--before", *before, "--after", *after, "--hours", "08-17",
                                              "--days", "mon-fri", "--also-shift", "22-06", "--out",
                                              "{tmp}/out.pptx"]),
               ("export-compare-lpar-pptx", ["export", "--before", *before, "--after", *after, "--lpar", "ZOSA",
                                             "--compare-by", "class", "--out", "{tmp}/out.pptx"]),
               ("export-compare-same-pptx", ["export", "--before", *zos, "--after", *zos, "--before-hours", "08-17",
                                             "--after-hours", "22-06", "--out", "{tmp}/out.pptx"]),
               ("export-compare-xlsx", ["export", "--before", *before, "--after", *after, "--out", "{tmp}/out.xlsx"]),
               ("export-pptx", ["export", *s, "--out", "{tmp}/out.pptx"]),
               ("export-xlsx", ["export", *zos, "--by", "class", "--out", "{tmp}/out.xlsx"])]
    bad = 0
    for name, argv in cases() + exports:
        if only not in name:
            continue
        got = []
        for root in (a, b):
            with tempfile.TemporaryDirectory(prefix="nestscope-same-") as tmp:
                got.append(export_csv(root, argv, tmp) if name.startswith("export-") else run(root, argv, tmp))
        same = got[0] == got[1]
        bad += not same
        print(f"{'same     ' if same else 'DIFFERENT'} {name:26s} exit {got[0][0]}/{got[1][0]}  "
              f"stdout {len(got[0][1])}/{len(got[1][1])} bytes  stderr {len(got[0][2])}/{len(got[1][2])} bytes",
              flush=True)
        if not same:
            for label, (x, y) in (("stdout", (got[0][1], got[1][1])), ("stderr", (got[0][2], got[1][2]))):
                if x != y:
                    at = next((i for i in range(min(len(x), len(y))) if x[i] != y[i]), min(len(x), len(y)))
                    part = x.rfind(b"\n== ", 0, at) + 1       # a deck's or workbook's part: its header line
                    where = x[part:x.find(b"\n", part)].decode(errors="replace") + ", " if part else ""
                    print(f"   {label} differs at byte {at} ({where}first / second):\n"
                          f"   {x[max(0, at - 150):at + 150]!r}\n   {y[max(0, at - 150):at + 150]!r}")
    print(f"{bad} case(s) differ" if bad else "every case byte-identical")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
