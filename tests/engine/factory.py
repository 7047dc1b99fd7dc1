"""Build counter-sample frames (app.formats.schema) directly in pandas for engine tests."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from app.formats.schema import (BASE_OF_BIT, IDENTITY_COLUMNS, SET_BASIC, SET_EXTENDED, SET_MT, SET_PROBLEM,
                                ReadResult, counter_name, set_size,
                                is_counter_column)

T0 = pd.Timestamp("2026-01-05 08:00:00")
MIN15 = pd.Timedelta(minutes=15)
ALL_SETS = SET_BASIC | SET_PROBLEM | SET_EXTENDED
GEN = {  # generation -> (machine type, cfvn, csvn, cpu speed)
    "z10": ("2097", 1, 1, 4400), "z196": ("2817", 1, 2, 5200), "zEC12": ("2827", 1, 3, 5500),
    "z13": ("2964", 1, 4, 5000), "z14": ("3906", 3, 5, 5200), "z15": ("8561", 3, 6, 5200),
    "z16": ("3931", 3, 7, 5200), "z17": ("9175", 3, 8, 5500),
}


def defaults(gen: str = "z16", **kw: Any) -> dict[str, Any]:
    mt, cfvn, csvn, speed = GEN[gen]
    d = dict(source="test.smf", offset=None, cec=f"{mt}-ABCDE", machine_type=mt, model="M01", serial="ABCDE",
             lpar="SYSA", system="SYSA", os="z/OS", cpu=0, core=-1, run_start=T0, time=T0 + MIN15,
             cpu_speed=speed, cfvn=cfvn, csvn=csvn, flags=0, lost=False, mt_lost=False, first=False,
             kind="delta", sets=ALL_SETS)
    d["class"] = "GCP"
    d.update(kw)
    return d


def frame(records: list[dict[str, Any]], gen: str = "z16") -> pd.DataFrame:
    """Records (identity overrides + counters such as B0=...) -> a schema-conformant frame."""
    rows = [defaults(gen, **r) for r in records]
    names = {k for r in rows for k in r if is_counter_column(k)}
    if rows:   # like the readers: every installed counter of every set present gets a column
        allsets = int(np.bitwise_or.reduce([int(r["sets"]) for r in rows]))
        for bit in (SET_BASIC, SET_PROBLEM, SET_EXTENDED, SET_MT):
            if allsets & bit:
                base = BASE_OF_BIT[bit]
                names |= {counter_name(base + j) for j in range(set_size(bit, rows[0]["cfvn"], rows[0]["csvn"]))}
    counters = sorted(names,
                      key=lambda c: ("BPKEM".index(c[0]), int(c[1:])))
    data: dict[str, Any] = {}
    for c, t in IDENTITY_COLUMNS.items():
        vals = [r[c] for r in rows]
        if c == "offset":
            vals = [v if v is not None else 100 * (i + 1) for i, v in enumerate(vals)]
        data[c] = pd.Series(vals, dtype=t)
    for c in counters:
        data[c] = np.array([int(r.get(c, 0)) for r in rows], dtype=np.uint64)
    return pd.DataFrame(data)


def result(records: list[dict[str, Any]], gen: str = "z16", file: str | None = None,
           partitions: pd.DataFrame | None = None) -> ReadResult:
    f = frame(records, gen)
    if file is not None:
        f["source"] = pd.Series([file] * len(f), dtype="category")
    name = file or (str(f["source"].iloc[0]) if len(f) else "empty.smf")
    return ReadResult(file=name, kind="smf", framing="rdw", records={"113/1": len(f)}, samples=f,
                      partitions=partitions)
