"""Record-level checks of the counter samples: later collection runs, CPUs coming and going, systems seen on
several machines.  Each LPAR's data is judged on its own (``keys.LPAR_KEY``): a clone of a system id on another
machine neither hides nor invents a run, a CPU change or an interval of this one.

Only the first (and last) records of each key matter, found on integer keys over the samples in time order;
the findings come from small frames of those rows.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from app.engine.keys import LPAR_KEY, Cols, dense, firsts_lasts, row_key, time_order
from app.findings import Finding, make_finding

__all__ = ["cpu_presence", "run_start_changes", "system_moves"]


def run_start_changes(S: Cols, t_order: np.ndarray) -> list[Finding]:
    """One info finding per later collection run (run_start) of an LPAR (of one machine)."""
    ok = ~np.isnat(S["run_start"])
    if not ok.any():
        return []
    if ok.all():
        rows = t_order
    else:
        r = np.flatnonzero(ok)
        rows = r[time_order(S["time"][r])]
    firsts = rows[firsts_lasts(*row_key(S, [*LPAR_KEY, "run_start"], rows))]
    cols = [*LPAR_KEY, "run_start", "source", "offset", "time"]
    if not _named(S, LPAR_KEY, firsts) or not all(c in S.cats for c in LPAR_KEY):
        return _later_runs(S.frame(firsts, cols))     # (a missing name: the frame's groupings leave it out)
    g, n = dense(*row_key(S, LPAR_KEY, firsts))
    if n == len(firsts):
        return []               # one run per LPAR: no later run
    # the LPARs with several runs, their first records in the order of (LPAR, run_start) (the categories' order:
    # the frame's sort), each LPAR's earliest run left out: the rows _later_runs would keep, found on the codes
    sel = np.flatnonzero(np.bincount(g, minlength=n)[g] > 1)
    by = [S["run_start"][firsts[sel]].view(np.int64)] + [S[c][firsts[sel]] for c in LPAR_KEY[::-1]]
    order = sel[np.lexsort(by)]
    later = np.zeros(len(order), bool)
    later[1:] = g[order][1:] == g[order][:-1]
    return _run_findings(S.frame(firsts[order[later]], cols))


def _later_runs(firsts: pd.DataFrame) -> list[Finding]:
    """Findings from the first record (in time order) of every (LPAR, run_start)."""
    counts = firsts.groupby(LPAR_KEY, sort=False, observed=True)["run_start"].transform("size")
    later = firsts.loc[counts.to_numpy() > 1].sort_values([*LPAR_KEY, "run_start"])
    later = later.loc[later.duplicated(LPAR_KEY, keep="first")]
    return _run_findings(later)


def _run_findings(later: pd.DataFrame) -> list[Finding]:
    """A finding per row of ``later``: the first record of an LPAR's later collection run."""
    return [make_finding(str(x.source), int(x.offset), "info", "new-run",
                         f"system {x.system}: a new collection run starts at {pd.Timestamp(x.run_start).isoformat()}",
                         "counters restart there; the first record of the run is a baseline only",
                         system=x.system, cec=x.cec, run_start=pd.Timestamp(x.run_start).isoformat())
            for x in later.itertuples(index=False)]


def _edges(S: Cols, t_order: np.ndarray, names: Sequence[str], last: bool = True) -> np.ndarray:
    """Positions in ``t_order`` of the first (and last) record of every ``names`` key, ascending."""
    return np.flatnonzero(firsts_lasts(*row_key(S, names, t_order), last))


def cpu_presence(S: Cols, t_order: np.ndarray) -> list[Finding]:
    """Info findings for logical CPUs that appear late or vanish early within a system's data.

    Judged on the records (baselines included), not on the intervals: a counter reset turns one record into a
    new baseline and leaves a gap in the intervals, but the CPU did not go away (the reset is its own finding).
    Only the first and last record of each CPU (in time order) matter: the frame is made of those.
    """
    if not len(S):
        return []
    rows = t_order[_edges(S, t_order, [*LPAR_KEY, "class", "cpu"])]
    if _steady(S, rows):
        return []
    return _cpu_presence_sorted(S.frame(rows, ["source", "offset", "system", "class", "cpu", "time", "cec", "lpar"]))


def _cpu_presence_sorted(r: pd.DataFrame) -> list[Finding]:
    """``cpu_presence`` on records already in time order."""
    span = r.groupby(LPAR_KEY, sort=False, observed=True)["time"].agg(["min", "max"])
    per = r.groupby([*LPAR_KEY, "class", "cpu"], sort=False, observed=True)
    firsts, lasts = per.head(1), per.tail(1)
    f = firsts.join(span, on=LPAR_KEY)
    l_ = lasts.join(span, on=LPAR_KEY)
    res = []
    for x in f.loc[f["time"] > f["min"]].itertuples(index=False):
        res.append(make_finding(str(x.source), int(x.offset), "info", "cpu-appeared",
                                f"system {x.system}: {x[3]} CPU {x.cpu} first appears in the record of "
                                f"{pd.Timestamp(x.time).isoformat()}",
                                "it was offline or not measured before; LPAR totals change there",
                                system=x.system, cec=x.cec, cpu=int(x.cpu)))
    for x in l_.loc[l_["time"] < l_["max"]].itertuples(index=False):
        res.append(make_finding(str(x.source), int(x.offset), "info", "cpu-vanished",
                                f"system {x.system}: {x[3]} CPU {x.cpu} is last seen in the record of "
                                f"{pd.Timestamp(x.time).isoformat()}",
                                "it went offline or stopped being measured; LPAR totals change there",
                                system=x.system, cec=x.cec, cpu=int(x.cpu)))
    return res


def system_moves(S: Cols, t_order: np.ndarray) -> list[Finding]:
    """A system seen on two CECs (moved LPAR, new machine) or changing versions on one CEC.

    A system that leaves one CEC and later runs on another is the usual before/after
    of a machine upgrade: an info finding.  The same system id on two CECs at the
    same time means two LPARs share an SMF id: a warning, their numbers stay apart.
    Only the first and last record (in time order) of each system and CEC and the first of each version
    matter: the frame is made of those.
    """
    pos = np.union1d(_edges(S, t_order, ["system", "cec"]),
                     _edges(S, t_order, [*LPAR_KEY, "machine_type", "cfvn", "csvn"], last=False))
    cols = ["source", "offset", "system", "cec", "lpar", "machine_type", "cfvn", "csvn", "time"]
    rows = t_order[pos]
    if _named(S, [*LPAR_KEY, "machine_type"], rows) and _count(S, ["system", "cec"], rows) == _count(
            S, ["system"], rows) and _count(S, [*LPAR_KEY, "machine_type", "cfvn", "csvn"], rows) == _count(
            S, LPAR_KEY, rows):
        return []               # each system on one CEC, each LPAR on one machine and version: nothing to say
    return _system_moves_sorted(S.frame(rows, cols))


# the usual case (nothing to say) found on the integer keys, before any frame is made: the frames' groupings
# leave out rows with a missing name, so a missing name (code -1) takes the frames' way
def _named(S: Cols, names: Sequence[str], rows: np.ndarray) -> bool:
    """No missing name (a category code -1) among ``names`` at ``rows``."""
    return all(not (S.codes(c)[0][rows] < 0).any() for c in names if c in S.cats)


def _count(S: Cols, names: Sequence[str], rows: np.ndarray) -> int:
    """Distinct values of ``names`` over ``rows``."""
    return dense(*row_key(S, names, rows))[1]


def _steady(S: Cols, rows: np.ndarray) -> bool:
    """True when every CPU's first and last record (``rows``, in time order) are at its LPAR's first and last
    time: no CPU appears late or vanishes early."""
    names = [*LPAR_KEY, "class", "cpu"]
    t = S["time"][rows].view(np.int64)
    if not len(rows) or np.isnat(S["time"][rows]).any() or not _named(S, names, rows):
        return False
    gl, nl = dense(*row_key(S, LPAR_KEY, rows))
    gc, nc = dense(*row_key(S, names, rows))
    lo, hi = np.full(nl, np.iinfo(np.int64).max), np.full(nl, np.iinfo(np.int64).min)
    np.minimum.at(lo, gl, t)
    np.maximum.at(hi, gl, t)
    at = np.arange(len(rows))
    first, last = np.full(nc, len(rows)), np.full(nc, -1)
    np.minimum.at(first, gc, at)
    np.maximum.at(last, gc, at)
    return bool((t[first] <= lo[gl[first]]).all() and (t[last] >= hi[gl[last]]).all())


def _system_moves_sorted(r: pd.DataFrame) -> list[Finding]:
    """``system_moves`` on records already in time order."""
    res = []
    span = r.groupby(["system", "cec"], observed=True, sort=False)["time"].agg(["min", "max"])
    first_per = r.drop_duplicates(["system", "cec"])
    for system, g in first_per.groupby("system", sort=False):
        for i in range(1, len(g)):
            x, p = g.iloc[i], g.iloc[i - 1]
            overlap = span.loc[(system, x["cec"]), "min"] <= span.loc[(system, p["cec"]), "max"]
            when = pd.Timestamp(x["time"]).isoformat()
            what = (f"system {system} runs on CEC {p['cec']} (type {p['machine_type']}) and on CEC {x['cec']} "
                    f"(type {x['machine_type']}) from {when}")
            meaning = ("both at the same time: two LPARs share this system id; they are shown apart under each CEC"
                       if overlap else "a move or machine upgrade: shown under each CEC, formulas of each "
                       "generation apply; compare the two with before/after, never average across them")
            res.append(make_finding(str(x["source"]), int(x["offset"]), "warning" if overlap else "info",
                                    "lpar-moved", what, meaning, system=system, cecs=f"{p['cec']},{x['cec']}"))
    vers = r.drop_duplicates([*LPAR_KEY, "machine_type", "cfvn", "csvn"])
    for (_cec, _lpar, system), g in vers.groupby(LPAR_KEY, sort=False, observed=True):
        if len(g) > 1:
            x, p = g.iloc[1], g.iloc[0]
            res.append(make_finding(str(x["source"]), int(x["offset"]), "warning", "machine-change",
                                    f"system {system} changes from machine type {p['machine_type']} "
                                    f"(CFVN {p['cfvn']}, CSVN {p['csvn']}) to {x['machine_type']} (CFVN {x['cfvn']}, "
                                    f"CSVN {x['csvn']}) at {pd.Timestamp(x['time']).isoformat()}",
                                    "formulas differ before and after; never average across the change",
                                    system=system))
    return res
