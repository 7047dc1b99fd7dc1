"""CSV writing benchmark: app.textsafe.csv_line (every output's CSV rule) against the csv module's C writer.

Rows shaped like ``report --format csv --by cpu``: cec, lpar, system, an ISO time and 40 number cells;
a share of the names need neutralising/quoting (``=1+2``).  Prints both times, taken in the same run, and
checks that both writers give a file that the csv module reads back to the same cells.

Run:  .venv/bin/python bench/bench_csv_line.py [--rows N] [--nasty FRACTION]
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from app.textsafe import csv_line, csv_text  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=50_000)
    ap.add_argument("--nasty", type=float, default=0.01, help="share of rows whose LPAR name is =1+2")
    a = ap.parse_args()
    every = max(1, round(1 / a.nasty)) if a.nasty > 0 else 0
    rows = [["3931-123F5", csv_text("=1+2" if every and i % every == 0 else "ZOSA"), "ZOSA", "2026-11-02T08:15:00Z"]
            + [f"{(i + j) * 0.123456789:.12g}" for j in range(40)] for i in range(a.rows)]
    cells = a.rows * len(rows[0])
    t = time.perf_counter()
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(rows)
    base = time.perf_counter() - t
    t = time.perf_counter()
    text = "".join(csv_line(r) for r in rows)
    ours = time.perf_counter() - t
    assert list(csv.reader(io.StringIO(text))) == list(csv.reader(io.StringIO(buf.getvalue()))) == rows
    print(f"{a.rows:,} rows, {cells:,} cells, {a.nasty:.0%} neutralised names")
    print(f"baseline csv.writer (C):  {base:6.3f} s  {cells / base / 1e6:5.2f} M cells/s")
    print(f"app.textsafe.csv_line:    {ours:6.3f} s  {cells / ours / 1e6:5.2f} M cells/s  "
          f"({ours / base:.2f}x the baseline)")


if __name__ == "__main__":
    main()
