"""The checks of a decoded SMF 113 file's samples (:mod:`app.formats.smf113`): records that repeat an earlier one
(dropped, counted once), counter sets missing for some of a CPU's records, machine types and counter versions
that contradict each other; and the file's summary (time range, machines, systems, CPUs per class).  The
columns are read as arrays once (:class:`Cols`); distinct rows come from integer keys, not hashing."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from app.formats import smf113_layout as L
from app.formats.rowkeys import firsts as _firsts
from app.formats.schema import SET_NAMES

__all__ = ["Cols", "check_samples", "summarise"]


class Cols(dict):
    """The columns of a frame as arrays (categoricals as ``pd.Categorical``, the others as numpy), each taken
    out of the frame once: the checks below read a dozen columns several times, and every ``df[col]`` builds
    a Series (about 0.2 ms, most of a small read's checks)."""

    def __init__(self, df: pd.DataFrame, known: dict | None = None) -> None:
        super().__init__(known or {})       # ``known``: columns the frame was built from, as they went in
        self.df = df

    def __missing__(self, col: str):
        s = self.df[col]
        v = self[col] = s.array if isinstance(s.dtype, pd.CategoricalDtype) else s.to_numpy()
        return v


def _repeats(cols: Cols) -> np.ndarray:
    """True for every record that repeats an earlier one of the same system, CPU, class, time and kind (what
    ``df.duplicated(..., keep='first')`` gives, through one stable sort of integer keys)."""
    n = len(cols.df)
    if n < 2:
        return np.zeros(n, bool)
    ident = _int_key(cols, ["system", "class", "kind", "cpu"])
    t = cols["time"].view(np.int64)
    order = np.lexsort((t, ident))                 # stable: equal keys stay in file order, the first is kept
    same = (ident[order][1:] == ident[order][:-1]) & (t[order][1:] == t[order][:-1])
    dup = np.zeros(n, bool)
    dup[order[1:][same]] = True
    return dup


def check_samples(df: pd.DataFrame, fnd: Any, cols: Cols | None = None) -> tuple[pd.DataFrame, Cols]:
    """File-level checks: duplicates (dropped), sets missing per CPU, machine type and versions; the frame kept
    and its columns (``cols``: those of ``df``, if known).  ``fnd``: the file's findings
    (``add(offset, severity, code, what, meaning, count=1, **key)``, :mod:`app.formats.smf113`'s collector)."""
    cols = Cols(df) if cols is None else cols
    dup = _repeats(cols)
    if dup.any():
        first = int(cols["offset"][dup][0])
        fnd.add(first, "warning", "duplicate-record", f"{int(dup.sum())} records repeat an earlier record of the same "
                "system, CPU, class, time and subtype", "each was counted once")
        df = df[~dup].reset_index(drop=True)
        cols = Cols(df)
    ident = ["system", "cpu", "class", "kind"]
    sets = cols["sets"]
    if len(sets) and bool((sets == sets[0]).all()):       # every record carries the same sets: none is missing
        missing = np.zeros(len(sets), sets.dtype)
    else:
        union = df.groupby(ident, observed=True, sort=False)["sets"].transform(
            lambda s: np.bitwise_or.reduce(s.to_numpy()))
        missing = (union.to_numpy() & ~sets)
    if missing.any():
        sub = df.loc[missing != 0, ["offset", *ident]].assign(missing=missing[missing != 0])
        for (system, cpu, cls, kind, miss), g in sub.groupby([*ident, "missing"], observed=True, sort=False):
            sets = ", ".join(SET_NAMES[b] for b in SET_NAMES if b & int(miss))
            fnd.add(int(g["offset"].iloc[0]), "warning", "set-missing", f"{system} {cls} CPU {cpu}: the {sets} "
                    f"counter set is missing although other records of this CPU carry it",
                    "metrics that need it are not computed for these intervals", count=len(g), system=system, cpu=cpu)
    rows = _first_rows(cols, ["machine_type", "cfvn", "csvn"])
    seen = zip(cols["machine_type"].take(rows), cols["cfvn"][rows].tolist(), cols["csvn"][rows].tolist(),
               cols["offset"][rows].tolist())
    for mt, cfvn, csvn, off in seen:
        mt = str(mt)
        if not mt:
            continue
        if mt not in L.MACHINES:
            fnd.add(int(off), "warning", "unknown-machine", f"machine type '{mt}' is not a known CPU MF machine "
                    "(z10 to z17)", "counter meanings of the extended set cannot be checked", machine_type=mt)
            continue
        gen, e1, e2 = L.MACHINES[mt]
        if (int(cfvn), int(csvn)) != (e1, e2):
            fnd.add(int(off), "warning", "csvn-mismatch", f"counter versions CFVN {cfvn} / CSVN {csvn} contradict "
                    f"machine type {mt} ({gen} has CFVN {e1} / CSVN {e2})",
                    "set sizes follow the versions; extended-counter meanings follow the machine type",
                    machine_type=mt)
    return df, cols


def summarise(df: pd.DataFrame, meta: dict, cols: Cols | None = None) -> None:
    meta["n_samples"] = int(len(df))
    if df.empty:
        meta.update(time_range=None, machines=[], systems=[], classes={}, cpus=0)
        return
    t = df["time"]
    meta["time_range"] = [t.min().isoformat(), t.max().isoformat()]
    cols = Cols(df) if cols is None else cols
    names = ["cec", "machine_type", "model", "serial"]
    rows = _first_rows(cols, ["cec"])
    firsts = zip(*(cols[k].take(rows) for k in names))
    meta["machines"] = [{k: str(v) for k, v in zip(names, r)} for r in firsts]
    system = cols["system"]
    meta["systems"] = sorted(str(s) for s in system.take(np.unique(system.codes)))   # each value once
    cls = cols["class"]
    codes = cls.codes[_first_rows(cols, ["system", "class", "cpu"])]
    per = np.bincount(codes[codes >= 0], minlength=len(cls.categories))      # CPUs per class, category order
    meta["classes"] = {str(k): int(v) for k, v in zip(cls.categories, per) if v}
    meta["cpus"] = int(len(codes))


def _first_rows(cols: Cols, names: list[str]) -> np.ndarray:
    """Row positions of the first occurrence of each distinct value tuple of ``names`` in row order (the rows
    ``df.drop_duplicates(names)`` keeps), from categorical codes and integers instead of hashing the values."""
    if not len(cols.df):
        return np.zeros(0, np.int64)
    return _firsts(pd.factorize(_int_key(cols, names))[0])   # codes in first-seen order: their first rows, ascending


def _int_key(cols: Cols, names: list[str]) -> np.ndarray:
    """One int64 per row, equal exactly where the rows' values of ``names`` (categoricals by code, integers) are
    equal: each column shifted to 0 .. span-1 and mixed in by its span (the frame not empty)."""
    key = np.zeros(len(cols.df), np.int64)
    for c in names:
        v = cols[c]
        x = v.codes if isinstance(v, pd.Categorical) else v
        x = x.astype(np.int64) - int(x.min())                 # 0 .. span-1 (a missing category's -1 included)
        key = key * (int(x.max()) + 1) + x
    return key
