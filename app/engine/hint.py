"""LSPR workload hint (LOW / AVERAGE / HIGH relative nest intensity) from L1MP and RNI.

The table is metrics.md section 6 / ``metrics.json`` ``lspr_workload_hint.rules_numeric``
(values UNCONFIRMED; the existence of an L1MP x RNI table for z10..z16 is confirmed
by IBM's LSPR page https://ibm.com/support/pages/node/6952525).  Each bound is
``[lower, lower_inclusive, upper, upper_inclusive]``, ``None`` = unbounded; the
first matching rule wins.  The engine computes the hint only at aggregate levels,
from summed deltas, leaving out lost-data intervals; ``"n/a"`` when the
generation has no RNI formula (z16/z17 by default) or no data.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

__all__ = ["RULES", "HINT_STATUS", "NA", "classify", "rules_text"]

HINT_STATUS = "unconfirmed"
NA = "n/a"
Bound = tuple[float | None, bool, float | None, bool]
RULES: list[dict[str, Any]] = [
    {"l1mp": (None, False, 3.0, False), "rni": (0.75, True, None, False), "hint": "AVERAGE"},
    {"l1mp": (None, False, 3.0, False), "rni": (None, False, 0.75, False), "hint": "LOW"},
    {"l1mp": (3.0, True, 6.0, True), "rni": (1.0, False, None, False), "hint": "HIGH"},
    {"l1mp": (3.0, True, 6.0, True), "rni": (0.6, True, 1.0, True), "hint": "AVERAGE"},
    {"l1mp": (3.0, True, 6.0, True), "rni": (None, False, 0.6, False), "hint": "LOW"},
    {"l1mp": (6.0, False, None, False), "rni": (0.75, True, None, False), "hint": "HIGH"},
    {"l1mp": (6.0, False, None, False), "rni": (None, False, 0.75, False), "hint": "AVERAGE"},
]


def _within(x: np.ndarray, b: Bound) -> np.ndarray:
    lo, lo_inc, hi, hi_inc = b
    m = np.isfinite(x)
    if lo is not None:
        m &= (x >= lo) if lo_inc else (x > lo)
    if hi is not None:
        m &= (x <= hi) if hi_inc else (x < hi)
    return m


def classify(l1mp: Sequence[float] | np.ndarray, rni: Sequence[float] | np.ndarray,
             rules: list[dict[str, Any]] | None = None) -> np.ndarray:
    """Vectorized hint.

    Parameters
    ----------
    l1mp, rni : array-like
        L1 misses per 100 instructions and relative nest intensity (ratio of sums).
    rules : list of dict, optional
        Rule table (default :data:`RULES`).

    Returns
    -------
    numpy.ndarray of object
        ``"LOW"``, ``"AVERAGE"``, ``"HIGH"`` or ``"n/a"`` (NaN input or no rule matched).
    """
    a = np.asarray(l1mp, dtype=np.float64)
    r = np.asarray(rni, dtype=np.float64)
    out = np.full(a.shape, NA, dtype=object)
    done = np.zeros(a.shape, dtype=bool)
    with np.errstate(invalid="ignore"):
        for rule in rules or RULES:
            m = ~done & _within(a, tuple(rule["l1mp"])) & _within(r, tuple(rule["rni"]))
            out[m] = rule["hint"]
            done |= m
    return out


def rules_text(rules: list[dict[str, Any]] | None = None) -> list[str]:
    """Human-readable rule lines (for tooltips and the glossary)."""
    def b(name: str, x: Bound) -> str:
        lo, li, hi, hi_inc = x
        parts = []
        if lo is not None:
            parts.append(f"{name} {'>=' if li else '>'} {lo:g}")
        if hi is not None:
            parts.append(f"{name} {'<=' if hi_inc else '<'} {hi:g}")
        return " and ".join(parts) or f"any {name}"
    return [f"{b('L1MP', tuple(r['l1mp']))}, {b('RNI', tuple(r['rni']))}: {r['hint']}" for r in rules or RULES]
