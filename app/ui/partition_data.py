"""What the partition data (z/VM D0R16) says about an LPAR, and the CEC's LPARs as a stack of busy over time.

No Qt here: plain frames for the partition view and the CEC plot.  Busy is in LPARCPU's unit throughout: % of
one CPU, summed over the LPAR's CPUs (D0R16 gives a per-CPU average per processor type, so it is multiplied by
that type's CPU count and summed over the types).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from app.ui.timeline_plots import epoch_seconds

BUSY_UNIT = "% of one CPU, summed over the LPAR's CPUs (as LPARCPU)"


@dataclass
class PartitionFacts:
    """What is known about one partition-only LPAR (no counters)."""

    cec: str
    lpar: str
    lpar_number: int | None = None
    processors: dict[str, int] = field(default_factory=dict)   # type -> logical CPUs (latest interval)
    weights: dict[str, int] = field(default_factory=dict)      # type -> weight (latest interval)
    capped: bool = False
    busy_mean: float | None = None                             # BUSY_UNIT, over the time window
    first: pd.Timestamp | None = None
    last: pd.Timestamp | None = None
    busy: pd.DataFrame = field(default_factory=pd.DataFrame)   # time (UTC), busy (BUSY_UNIT) per interval


def _utc(t: Any) -> pd.Timestamp:
    t = pd.Timestamp(t)
    return t.tz_localize("UTC") if t.tzinfo is None else t.tz_convert("UTC")


def _in_window(times: pd.Series, start: Any, end: Any) -> np.ndarray:
    """Rows whose time is in ``(start, end]`` (UTC; None = open)."""
    t = pd.to_datetime(times, utc=True)
    mask = np.ones(len(t), dtype=bool)
    if start is not None:
        mask &= (t > _utc(start)).to_numpy()
    if end is not None:
        mask &= (t <= _utc(end)).to_numpy()
    return mask


def busy_series(parts: pd.DataFrame) -> pd.DataFrame:
    """Per (cec, lpar, time): busy in BUSY_UNIT (NaN when a processor type has no busy value) and CPUs."""
    if parts is None or not len(parts):
        return pd.DataFrame(columns=["cec", "lpar", "time", "busy", "cpus"])
    p = parts.assign(cec=parts["cec"].astype(str), lpar=parts["lpar"].astype(str),
                     busy_x=parts["busy_pct"].astype(float) * parts["cpus"].astype(float))
    p = p.assign(missing=p["busy_x"].isna())
    out = (p.groupby(["cec", "lpar", "time"], sort=True)
           .agg(busy=("busy_x", "sum"), missing=("missing", "any"), cpus=("cpus", "sum")).reset_index())
    out.loc[out["missing"], "busy"] = np.nan      # a processor type without a busy value: the sum is unknown
    return out.drop(columns="missing")


def facts(parts: pd.DataFrame, cec: str, lpar: str, start: Any = None, end: Any = None) -> PartitionFacts:
    """The partition facts of ``(cec, lpar)`` within ``(start, end]`` (the whole range when None)."""
    f = PartitionFacts(cec=str(cec), lpar=str(lpar))
    if parts is None or not len(parts):
        return f
    p = parts.loc[(parts["cec"].astype(str) == str(cec)) & (parts["lpar"].astype(str) == str(lpar))]
    if not len(p):
        return f
    last_t = p["time"].max()
    latest = p.loc[p["time"] == last_t]
    for cls, g in latest.groupby(latest["class"].astype(str), sort=True):
        f.processors[cls] = int(g["cpus"].sum())
        f.weights[cls] = int(g["weight"].max())
    f.capped = bool(p["capped"].astype(bool).any())
    f.lpar_number = int(p["lpar_number"].iloc[0]) if "lpar_number" in p and pd.notna(p["lpar_number"].iloc[0]) \
        else None
    b = busy_series(p)
    b = b.loc[_in_window(b["time"], start, end)]
    f.busy = b[["time", "busy"]].reset_index(drop=True)
    f.busy_mean = float(b["busy"].mean()) if b["busy"].notna().any() else None
    if len(b):
        f.first, f.last = pd.Timestamp(b["time"].min()), pd.Timestamp(b["time"].max())
    return f


def cec_stack(ws: Any, cec: str) -> pd.DataFrame:
    """The LPARs of CEC ``cec`` as busy over time: LPARCPU per LPAR interval for LPARs with counters, D0R16 busy
    (BUSY_UNIT) for the partition-only ones.  Columns: lpar, x (epoch s), busy, source ("counters" or
    "partition data"); rows of one LPAR sorted by time."""
    frames = []
    measured: set[str] = set()
    m = ws.metrics(by="lpar_interval")
    if len(m) and "cec" in m.columns:
        m = m.loc[m["cec"].astype(str) == str(cec)]
        if len(m) and "LPARCPU" in m.columns:
            measured = set(m["lpar"].astype(str))
            frames.append(pd.DataFrame({"lpar": m["lpar"].astype(str).to_numpy(),
                                        "x": epoch_seconds(m["interval_end"]),
                                        "busy": m["LPARCPU"].astype(float).to_numpy(), "source": "counters"}))
    b = busy_series(ws.partitions)
    b = b.loc[(b["cec"] == str(cec)) & ~b["lpar"].isin(measured) & b["busy"].notna()]
    if len(b):
        frames.append(pd.DataFrame({"lpar": b["lpar"].to_numpy(), "x": epoch_seconds(b["time"]),
                                    "busy": b["busy"].to_numpy(dtype=float), "source": "partition data"}))
    if not frames:
        return pd.DataFrame(columns=["lpar", "x", "busy", "source"])
    out = pd.concat(frames, ignore_index=True)
    return out.sort_values(["source", "lpar", "x"], kind="stable").reset_index(drop=True)


def stack_grid(stack: pd.DataFrame) -> tuple[np.ndarray, dict[str, np.ndarray]]:
    """The CEC stack on one time grid: buckets as long as the coarsest LPAR's interval (mean busy of each LPAR
    in a bucket, 0 where an LPAR has no data), ending at the bucket's end.  Returns (x, {lpar: busy})."""
    if stack is None or not len(stack):
        return np.array([]), {}
    steps = [float(np.median(np.diff(np.sort(g["x"].to_numpy())))) for _l, g in stack.groupby("lpar")
             if len(g) > 1]
    step = max(steps) if steps else 900.0
    bucket = np.ceil(stack["x"].to_numpy(dtype=float) / step) * step
    s = stack.assign(bucket=bucket)
    pivot = s.pivot_table(index="bucket", columns="lpar", values="busy", aggfunc="mean", sort=True)
    order = list(dict.fromkeys(stack["lpar"]))   # counters first, then partition data (cec_stack's order)
    x = pivot.index.to_numpy(dtype=float)
    return x, {lp: np.nan_to_num(pivot[lp].to_numpy(dtype=float)) for lp in order if lp in pivot.columns}
