"""Row keys over identity columns, and the one rule of what identifies an LPAR's data.

An LPAR's counter data is identified by its machine (``cec``: machine type + serial) and its LPAR (``lpar``;
z/OS: the SMF system id, as SMF 113 names no LPAR) with the system id.  A system id alone never is: disaster
recovery and test clones keep production's system ids, and so do sysplexes on different machines.  Every join,
duplicate check, subtype 1/2 merge, run and reset detection and per-LPAR statistic of the engine groups by
:data:`LPAR_KEY` (and whatever finer columns it needs), so opening more files never changes the numbers of a
machine whose files are already open.

The helpers turn columns (numpy arrays, string columns as category codes) into one int64 key per row and find
first / last rows and group orders on it, vectorized (``app.engine.deltas``, ``app.engine.record_checks``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

__all__ = ["LPAR_KEY", "Cols", "by_group", "codes", "dense", "firsts_lasts", "rising_within", "row_key",
           "time_order"]

LPAR_KEY = ["cec", "lpar", "system"]


class Cols:
    """Columns of equal length as numpy arrays; string columns as category codes with their dtype.

    Dense codes of a column (for grouping) are made once; a :meth:`take` reads them from its parent.
    """

    def __init__(self, a: dict[str, np.ndarray], cats: dict[str, pd.CategoricalDtype],
                 parent: Cols | None = None, rows: np.ndarray | None = None):
        self.a, self.cats = a, cats
        self._parent, self._rows = parent, rows
        self._codes: dict[str, tuple[np.ndarray, int]] = {}

    def __getitem__(self, c: str) -> np.ndarray:
        return self.a[c]

    def __len__(self) -> int:
        return len(next(iter(self.a.values())))

    def take(self, rows: np.ndarray) -> Cols:
        return Cols({c: v[rows] for c, v in self.a.items()}, self.cats, self, rows)

    def detach(self) -> None:
        """Let go of the parent (a :meth:`take`'s): codes not made yet are made from this one's columns (the
        same groups: codes are only compared for equality), so the parent's columns can be freed."""
        self._parent = self._rows = None

    def codes(self, c: str) -> tuple[np.ndarray, int]:
        """Codes of column ``c`` and their count: a string column's category codes as they are (any integer
        dtype, -1 for a missing name), else dense non-negative int64 codes (NaT is a value of its own)."""
        if c in self.cats:              # the category codes as they are (int8 mostly): no int64 copy kept
            return self.a[c], max(len(self.cats[c].categories), 1)
        got = self._codes.get(c)
        if got is None:
            if self._parent is not None and c in self._parent.a:
                pc, m = self._parent.codes(c)
                got = pc[self._rows], m
            else:
                got = codes(self.a[c])
            self._codes[c] = got
        return got

    def series(self, c: str, rows: np.ndarray | None = None):
        v = self.a[c] if rows is None else self.a[c][rows]
        return pd.Categorical.from_codes(v, dtype=self.cats[c]) if c in self.cats else v

    def frame(self, rows: np.ndarray | None = None, cols: Sequence[str] | None = None,
              index: np.ndarray | None = None) -> pd.DataFrame:
        """A DataFrame of ``cols`` (all) at ``rows`` (all), string columns as categoricals."""
        cols = list(self.a) if cols is None else cols
        return pd.DataFrame({c: self.series(c, rows) for c in cols}, index=index)


def codes(v: np.ndarray) -> tuple[np.ndarray, int]:
    """Dense non-negative codes of one array and their count (NaT is a value of its own)."""
    if v.dtype.kind in "mM":
        v = v.view(np.int64)
    c, u = pd.factorize(v)
    return c.astype(np.int64, copy=False), max(len(u), 1)


def row_key(cols: Cols, names: Sequence[str], rows: np.ndarray | None = None) -> tuple[np.ndarray, int]:
    """One int64 per row, equal exactly where all ``names`` columns are equal, and the bound of its values
    (not densely numbered)."""
    key, span = None, 1
    for c in names:
        cd, m = cols.codes(c)
        if key is None:
            key, span = cd.astype(np.int64, copy=False), m
        else:
            if span * m >= 2 ** 62:            # keep the mixed key within int64: renumber it densely first
                key, span = codes(key)
            key = key * m + cd
            span *= m
    if key is None:
        return np.zeros(len(cols) if rows is None else len(rows), np.int64), 1
    return (key if rows is None else key[rows]), span


def small(span: int, n: int) -> bool:
    """A table of ``span`` entries is cheap beside ``n`` rows (first/last rows by ufunc.at, not hashing)."""
    return span <= max(4 * n, 1 << 16)


def dense(key: np.ndarray, span: int) -> tuple[np.ndarray, int]:
    """Group numbers in order of first appearance (``groupby(sort=False).ngroup()``) and their count."""
    n = len(key)
    if not n:
        return np.zeros(0, np.int64), 0
    if not small(span, n):
        c = pd.factorize(key)[0].astype(np.int64, copy=False)
        return c, int(c.max()) + 1
    first = np.full(span, n, np.int64)
    np.minimum.at(first, key, np.arange(n))
    present = np.flatnonzero(first < n)
    rank = np.zeros(span, np.int64)
    rank[present[np.argsort(first[present], kind="stable")]] = np.arange(len(present))
    return rank[key], len(present)


def firsts_lasts(key: np.ndarray, span: int, last: bool = False) -> np.ndarray:
    """True at the first row of each key value (``~duplicated(keep="first")``), with ``last`` also at the last."""
    n = len(key)
    if not n:
        return np.zeros(0, bool)
    if not small(span, n):
        key, span = dense(key, span)
    rows = np.arange(n)
    first = np.full(span, n, np.int64)
    np.minimum.at(first, key, rows)
    out = np.zeros(n, bool)
    out[first[first < n]] = True
    if last:
        lst = np.full(span, -1, np.int64)
        np.maximum.at(lst, key, rows)
        out[lst[lst >= 0]] = True
    return out


def by_group(g: np.ndarray, count: int) -> np.ndarray:
    """Rows ordered by group number, in row order within a group (a radix sort when the numbers are small)."""
    return np.argsort(g.astype(np.int16) if count < 2 ** 15 else g, kind="stable")


def rising_within(g: np.ndarray, count: int, t: np.ndarray, strict: bool) -> tuple[np.ndarray, bool]:
    """Rows by group (``_by_group``) and whether ``t`` rises (``strict``) or never falls within every group."""
    o = by_group(g, count)
    gs, ts = g[o], t[o]
    same = gs[1:] == gs[:-1]
    bad = (ts[1:] <= ts[:-1]) if strict else (ts[1:] < ts[:-1])
    return o, not (same & bad).any()


def time_order(t: np.ndarray) -> np.ndarray:
    """The row order ``DataFrame.sort_values("time")`` gives (pandas: a quicksort of the non-NaT times, NaT
    rows last); its order of equal times is what head/tail/drop_duplicates after that sort see."""
    nat = np.isnat(t)
    if not nat.any():
        return t.argsort(kind="quicksort")
    idx = np.arange(len(t))
    return np.concatenate([idx[~nat][t[~nat].argsort(kind="quicksort")], idx[nat]])
