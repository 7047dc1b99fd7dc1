"""Physical bounds on the counter deltas of every CPU-interval (issue 20; docs/physical-bounds.md).

A flipped byte inside one counter (a damaged transfer, a bad tape) gives a delta no machine can count: an L3P of
873.6 % in one interval moved a z16 LPAR's L3P over the range from 12.4 to 16.2 (issue 20).  Before any interval enters a sum, its
deltas are checked against bounds that hold for every real interval of every generation:

========================  ==========================================================================  ===============
group                     bound (one row = one logical CPU, one interval; S = :data:`SLACK_EVENTS`)   applies to
========================  ==========================================================================  ===============
cycles                    B0 <= clock x (interval x (1 + CYCLE_TOLERANCE) + CLOCK_SKEW_S)             every row
any counter               C <= EVENTS_PER_CYCLE x that wall-clock bound (MT set: x 2 threads)          every row
MT core cycles            M448 + M449 <= the wall-clock bound (one core: one cycle per clock)           every row
instructions              B1 <= MAX_IPC[generation] x B0 + S                                          clean rows
problem state             P32 <= B0, P33 <= B1, P34..P37 <= B2..B5 (each + S)                          clean rows
cycle counts              B3, B5, the TLB-miss and L1-miss cycle counters <= B0 + S                     clean rows
events                    every other B, P, K, E counter <= EVENTS_PER_CYCLE x B0 + S                  clean rows
sourcing                  sum of the sourcing counters <= (B2 + B4) x (1 + SOURCING_TOLERANCE) + S      clean rows
========================  ==========================================================================  ===============

"Clean rows" are rows without the hardware's lost-data flag: lost counter data can only make counts smaller,
so upper bounds on a counter hold there, but bounds between two counters do not.  Each sourcing share
(L2P..MEMP, L15P..) is a part of the sourcing sum over the same L1 misses, so the sourcing bound also keeps every
share at or below 100 % x (1 + SOURCING_TOLERANCE).  A NaN delta (set absent, counter not installed) is never a
violation.

A row that breaks a bound gets quality bit :data:`IMPLAUSIBLE` and one finding (file, byte offset of the record,
counter, value, bound); :func:`left_out` then NaNs its counters and sets :data:`LEFT_OUT`, so the row stays in the
frame (its CPU, its marks) but adds nothing to any sum, unless the analyst keeps it (``--keep-implausible``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from app.engine.catalog import FormulaSet
from app.engine.deltas import QUALITY_BITS, quality_strings
from app.findings import Finding, make_finding
from app.formats.common import categorical_from_codes

__all__ = ["IMPLAUSIBLE", "LEFT_OUT", "MAX_IPC", "scan", "check", "left_out", "suspects", "Violation"]

IMPLAUSIBLE = QUALITY_BITS["implausible"]
LEFT_OUT = QUALITY_BITS["left-out"]

# Record times and counter snapshots may differ by up to a second (deltas.STATED_TOLERANCE_S); an interval may be
# stretched by a late record: 5 % of the interval plus 2 s of the clock on top of the interval's cycles.
CYCLE_TOLERANCE = 0.05
CLOCK_SKEW_S = 2.0
# The counters of one CPU are read one after the other; on an almost idle CPU a few thousand events counted
# between two reads must not break a ratio bound.
SLACK_EVENTS = 10_000.0
# No counter of the basic, problem-state, crypto or extended sets counts more than one event per instruction
# completed or per cycle; no generation completes more than 8 instructions per cycle (MAX_IPC).
EVENTS_PER_CYCLE = 8.0
# The sourcing counters split the L1 directory writes (B2 + B4) by source; B2/B4 also count writes that no
# sourcing counter sees, so the sum stays below them.  metrics.md 7.6 expects 90..110 % (unconfirmed); the
# bound allows 125 %, so that only impossible values are left out.
SOURCING_TOLERANCE = 0.25
# Instructions completed per cycle and thread: at most what the core can decode per cycle (see the docs table).
MAX_IPC = {"z10": 2.0, "z196": 3.0, "zEC12": 3.0, "z13": 6.0, "z14": 6.0, "z15": 6.0, "z16": 8.0, "z17": 8.0}
MAX_IPC_UNKNOWN = 8.0
# Counters that count cycles (a TLB miss in progress, an L1 miss in progress), metrics.md 3.x tables:
# the TLB1_Miss_Pct_CPU numerators are "% of cycles"; E143 (z13+) is the finite-cache cycle count.
CYCLE_COUNTERS = {"z10": ("E145", "E146"), "z196": ("E130", "E131"), "zEC12": ("E128", "E129"),
                  "z13": ("E130", "E135", "E143"), "z14": ("E130", "E135", "E143"),
                  "z15": ("E130", "E135", "E143"), "z16": ("E130", "E135", "E143"),
                  "z17": ("E130", "E135", "E143")}
SOURCING_METRICS = ("L15P", "L2LP", "L2RP", "L2P", "L3P", "L4LP", "L4RP", "MEMP")
PROBLEM_OF = {"P32": "B0", "P33": "B1", "P34": "B2", "P35": "B3", "P36": "B4", "P37": "B5"}
_DETAIL_LIMIT = 10           # findings with every detail per file; the rest in one finding per file


@dataclass(frozen=True)
class Violation:
    """The first bound one row breaks (a row may break several: the first in rule order is named)."""

    row: int
    group: str
    counter: str
    value: float
    bound: float
    rule: str


def sourcing_counters(fs: FormulaSet | None) -> list[str]:
    """Extended counters the sourcing metrics of ``fs`` read (each level's group; z10..zEC12 MEMP is the
    remainder of the same counters)."""
    if fs is None:
        return []
    out: set[str] = set()
    for mid in SOURCING_METRICS:
        m = fs.metrics.get(mid)
        if m is not None and m.compiled is not None:
            out |= {c for c in m.compiled.counters if c.startswith("E")}
    return sorted(out, key=lambda c: int(c[1:]))


_CHUNK = 16_384      # rows tested at a time by the rules (a few MB of counters: stays in cache)


class _Rules:
    """Evaluates bounds on the frame rows ``rows`` (the rows of the arrays handed to :meth:`test`); keeps the
    first violation of each row of the frame as arrays (a file damaged throughout costs no Python loop per row)."""

    def __init__(self, n: int):
        self.n = n
        self.rows = np.zeros(0, np.int64)
        self.hit = np.zeros(n, bool)
        self.open = np.ones(n, bool)      # ~hit, kept up to date

    def __getattr__(self, name: str):
        """The details of the violations (value, bound, counter, rule, group), made at the first one."""
        if name not in ("value", "bound", "counter", "rule", "group"):
            raise AttributeError(name)
        n = self.n
        self.value, self.bound = np.zeros(n), np.zeros(n)
        self.counter, self.rule, self.group = (np.full(n, "", dtype=object) for _ in range(3))
        return getattr(self, name)

    def test(self, group: str, value: np.ndarray, bound: np.ndarray, counter, rule,
             where: np.ndarray | None = None) -> None:
        """Record rows where ``value > bound`` (and ``where``); ``counter``/``rule``: a text or one per row."""
        with np.errstate(invalid="ignore"):
            bad = value > bound           # NaN on either side: no violation
        if where is not None:
            bad &= where
        bad &= self.open[self.rows]       # the first bound a row breaks is the one named
        i = np.flatnonzero(bad)
        if not len(i):
            return
        r = self.rows[i]
        self.hit[r], self.open[r] = True, False
        self.value[r], self.bound[r] = value[i], bound[i]
        self.counter[r] = counter[i] if isinstance(counter, np.ndarray) else counter
        self.rule[r] = rule[i] if isinstance(rule, np.ndarray) else rule
        self.group[r] = group

    def violation(self, r: int) -> Violation:
        return Violation(int(r), str(self.group[r]), str(self.counter[r]), float(self.value[r]),
                         float(self.bound[r]), str(self.rule[r]))

    def found(self) -> list[Violation]:
        return [self.violation(r) for r in np.flatnonzero(self.hit)]


class _Gens:
    """The generation of some rows as small integer codes; rows of the generations meeting a condition."""

    def __init__(self, code: np.ndarray, names: list[str]):
        self.code, self.names = code, names

    def rows(self, pred) -> np.ndarray:
        return np.array([bool(pred(g)) for g in self.names] + [False], bool)[self.code]

    def per_row(self, values: list) -> np.ndarray:
        return np.array(values, dtype=object if isinstance(values[0], str) else np.float64)[self.code]


def _sourcing(cols: dict[str, np.ndarray], G: _Gens, src: dict[str, set[str]]
              ) -> tuple[np.ndarray, np.ndarray] | None:
    """Per row the sum of its generation's sourcing counters ``src`` (NaN when none is present) and the largest
    one's name; None when no generation has sourcing counters."""
    every = sorted(set().union(*src.values()), key=lambda c: int(c[1:]))
    if not every:
        return None
    n = len(G.code)
    total, seen = np.zeros(n), np.zeros(n, bool)
    big, name = np.full(n, -1.0), np.full(n, "", dtype=object)
    for c in every:
        v = cols[c]
        ok = G.rows(lambda g, c=c: c in src[g]) & ~np.isnan(v)
        np.add(total, v, out=total, where=ok)
        seen |= ok
        up = ok & (v > big)
        big[up], name[up] = v[up], c
    total[~seen] = np.nan
    return total, name


def violations(iv: pd.DataFrame, sets: dict[str, FormulaSet], counters: Sequence[str]) -> list[Violation]:
    """The first bound each row of the intervals frame breaks, in row order."""
    return _scan(iv, sets, counters).found()


def _scan(iv: pd.DataFrame, sets: dict[str, FormulaSet], counters: Sequence[str], every_row: bool = False
          ) -> _Rules:
    """Test the rows against the bounds: first every row at once against a looser test that every row breaking
    a bound fails too (:func:`_suspects`, whole columns, no per-rule work), then only the rows it finds against
    every rule in order (:func:`_scan_rows`), :data:`_CHUNK` rows at a time.  ``every_row``: every row through
    the rules (the reference the looser test is checked against)."""
    n = len(iv)
    R = _Rules(n)
    if not n:
        return R
    counters, code, names, src, cols, wall = _inputs(iv, sets, counters)
    clean = (iv["qbits"].to_numpy(dtype=np.int64) & QUALITY_BITS["lost-data"]) == 0
    rows = np.arange(n) if every_row else np.flatnonzero(_suspects(cols, wall, code, names, src, counters))
    for r0 in range(0, len(rows), _CHUNK):
        R.rows = rows[r0:r0 + _CHUNK]
        _scan_rows({c: v[R.rows] for c, v in cols.items()}, wall[R.rows], clean[R.rows],
                   _Gens(code[R.rows], names), src, counters, R)
    return R


def suspects(iv: pd.DataFrame, sets: dict[str, FormulaSet], counters: Sequence[str],
             cols: dict[str, np.ndarray] | None = None) -> np.ndarray:
    """Per row of ``iv`` whether it may break a bound: every row :func:`check` would mark, and few others (clean
    data: none).  A row's test reads that row alone (its own generation's bounds), so the rows of a frame may be
    tested in pieces (the fleet extract: a row group of deltas at a time) and :func:`check` run on the rows
    found alone: it marks and says what it would on the whole frame.  ``cols``: the counter columns as arrays
    (float64) of ``iv``'s rows, when ``iv`` holds only its generation, CPU speed and interval length."""
    if not len(iv):
        return np.zeros(0, bool)
    counters, code, names, src, cols, wall = _inputs(iv, sets, counters, cols)
    return _suspects(cols, wall, code, names, src, counters)


def _inputs(iv: pd.DataFrame, sets: dict[str, FormulaSet], counters: Sequence[str],
            given: dict[str, np.ndarray] | None = None):
    """What the tests read of ``iv``: the counters it has, each row's generation (codes, names), the sourcing
    counters of each generation, the counter columns (views of the frame's float columns, or ``given``), the
    wall-clock bound."""
    counters = [c for c in counters if c in (iv.columns if given is None else given)]
    gen = iv["generation"]
    if isinstance(gen.dtype, pd.CategoricalDtype) and not (gen.cat.codes.to_numpy() < 0).any():
        code, names = gen.cat.codes.to_numpy(dtype=np.int64), [str(g) for g in gen.cat.categories]
    else:
        code, uniq = pd.factorize(gen.astype(object).to_numpy())
        names = [str(g) for g in uniq]
    have = set(counters)
    src = {g: set(sourcing_counters(sets.get(g))) & have for g in names}
    speed = iv["cpu_speed"].to_numpy(dtype=np.float64)
    secs = iv["interval_s"].to_numpy(dtype=np.float64)
    cols = {c: iv[c].to_numpy(dtype=np.float64) for c in counters} if given is None else given  # views
    with np.errstate(invalid="ignore"):
        wall = np.where(speed > 0, speed * 1e6 * (secs * (1 + CYCLE_TOLERANCE) + CLOCK_SKEW_S), np.nan)
    return counters, code, names, src, cols, wall


def _suspects(cols: dict[str, np.ndarray], wall: np.ndarray, code: np.ndarray, names: list[str],
              src: dict[str, set[str]], counters: list[str]) -> np.ndarray:
    """Rows that may break a bound: every row :func:`_scan_rows` finds, and few others (clean data: none).

    Each rule's comparison, computed as the rule computes it, without the rule's row condition (clean rows,
    generations); the event and wall-clock bounds of the event counters at once, as their largest value against
    the lower of the two bounds; the sourcing sum as a sum of every generation's sourcing counters with NaN and
    negative values as 0, in the rule's order (float sums are monotonic: never below the rule's sum).  Whole
    columns, :data:`_CHUNK` rows at a time (the running maximum and sum stay in cache)."""
    n = len(wall)
    sus = np.zeros(n, bool)
    names_ipc = np.array([MAX_IPC.get(g, MAX_IPC_UNKNOWN) for g in names], np.float64)
    # the counters the event rule tests (BPKE, not B0/B1/B3/B5, not problem state) against both bounds at once
    ev = [c for c in counters if c[0] in "BPKE" and c not in ("B0", "B1", "B3", "B5") and c not in PROBLEM_OF]
    mt = [c for c in counters if c[0] == "M"]
    rest = [c for c in counters if c[0] != "M" and c not in ev]
    cyc = [c for c in ("B3", "B5") if c in cols]
    cyc += sorted({c for g in names for c in CYCLE_COUNTERS.get(g, ())} & set(cols))
    every = sorted(set().union(*src.values()), key=lambda c: int(c[1:]))
    for r0 in range(0, n, _CHUNK):
        r1 = min(n, r0 + _CHUNK)
        _suspect_rows({c: v[r0:r1] for c, v in cols.items()}, wall[r0:r1], names_ipc[code[r0:r1]], sus[r0:r1],
                      ev, mt, rest, cyc, every)
    return sus


def _suspect_rows(cols: dict[str, np.ndarray], wall: np.ndarray, ipc: np.ndarray, sus: np.ndarray,
                  ev: list[str], mt: list[str], rest: list[str], cyc: list[str], every: list[str]) -> None:
    """:func:`_suspects` on some rows: sets ``sus`` (a view) where a row may break a bound."""
    b = {c: cols.get(c) for c in ("B0", "B1", "B2", "B3", "B4", "B5")}
    b0 = b["B0"]
    tmp = np.empty(len(wall))

    def over(value: np.ndarray, bound: np.ndarray) -> None:
        np.greater(value, bound, out=hit)
        sus[:] |= hit

    hit = np.empty(len(wall), bool)
    with np.errstate(invalid="ignore"):
        if b0 is not None:
            over(b0, wall)
        events = EVENTS_PER_CYCLE * b0 + SLACK_EVENTS if b0 is not None else None
        for group, k in ((ev, EVENTS_PER_CYCLE), (mt, 2 * EVENTS_PER_CYCLE)):
            if group:
                top = cols[group[0]].copy()
                for c in group[1:]:
                    np.fmax(top, cols[c], out=top)                # NaN only where every counter is NaN
                lim = k * wall
                if events is not None and k == EVENTS_PER_CYCLE:
                    np.fmin(lim, events, out=lim)
                over(top, lim)
        for c in rest:                    # the others against the wall-clock bound of any counter
            over(cols[c], EVENTS_PER_CYCLE * wall)
        if "M448" in cols and "M449" in cols:
            over(cols["M448"] + cols["M449"], wall)
        if b0 is None:
            return
        if b["B1"] is not None:
            over(b["B1"], ipc * b0 + SLACK_EVENTS)
        for p, total in PROBLEM_OF.items():
            if p in cols and b[total] is not None:
                over(cols[p], b[total] + SLACK_EVENTS)
        for c in cyc:
            over(cols[c], b0 + SLACK_EVENTS)
        if every and b["B2"] is not None and b["B4"] is not None:
            total = np.zeros(len(wall))
            for c in every:
                np.fmax(cols[c], 0.0, out=tmp)
                np.add(total, tmp, out=total)
            over(total, (b["B2"] + b["B4"]) * (1 + SOURCING_TOLERANCE) + SLACK_EVENTS)


def _scan_rows(cols: dict[str, np.ndarray], wall: np.ndarray, clean: np.ndarray, G: _Gens,
               src: dict[str, set[str]], counters: list[str], R: _Rules) -> None:
    """The bounds in order: cycles; per counter the wall-clock bound, then (clean rows) the event bound; MT core
    cycles; instructions; problem state; cycle counts; sourcing."""
    b = {c: cols.get(c) for c in ("B0", "B1", "B2", "B3", "B4", "B5")}
    b0, b1 = b["B0"], b["B1"]
    if b0 is not None:
        R.test("cycles", b0, wall, "B0", "cycles <= interval x clock")
    # cycle-count counters: B3 and B5 everywhere, the others in the generations that count cycles in them
    cyc: dict[str, np.ndarray | None] = {c: None for c in ("B3", "B5") if c in cols}
    for c in sorted({c for g in G.names for c in CYCLE_COUNTERS.get(g, ())} & set(cols)):
        cyc[c] = G.rows(lambda g, c=c: c in CYCLE_COUNTERS.get(g, ()))
    limit = {k: k * wall for k in (EVENTS_PER_CYCLE, 2 * EVENTS_PER_CYCLE)}
    events = EVENTS_PER_CYCLE * b0 + SLACK_EVENTS if b0 is not None else None
    for c in counters:
        v = cols[c]
        k = EVENTS_PER_CYCLE * (2.0 if c[0] == "M" else 1.0)
        R.test("any counter", v, limit[k], c, f"any counter <= {k:g} x interval x clock")
        if events is not None and c[0] in "BPKE" and c not in ("B0", "B1", "B3", "B5") and c not in PROBLEM_OF:
            where = clean if cyc.get(c) is None else clean & ~cyc[c]
            R.test("events", v, events, c, f"events <= {EVENTS_PER_CYCLE:g} x B0", where)
    if "M448" in cols and "M449" in cols:
        R.test("MT core cycles", cols["M448"] + cols["M449"], wall, "M448+M449", "core cycles <= interval x clock")
    if b0 is None:
        return
    if b1 is not None:
        ipc = [MAX_IPC.get(g, MAX_IPC_UNKNOWN) for g in G.names]
        R.test("instructions", b1, G.per_row(ipc) * b0 + SLACK_EVENTS, "B1",
               G.per_row([f"instructions <= {k:g} x cycles" for k in ipc]), clean)
    for p, total in PROBLEM_OF.items():
        if p in cols and b[total] is not None:
            R.test("problem state", cols[p], b[total] + SLACK_EVENTS, p, f"{p} <= {total}", clean)
    for c, rows in cyc.items():
        R.test("cycle counts", cols[c], b0 + SLACK_EVENTS, c, f"{c} (cycles) <= B0",
               clean if rows is None else clean & rows)
    got = _sourcing(cols, G, src) if b["B2"] is not None and b["B4"] is not None else None
    if got is not None:
        total, big = got
        R.test("sourcing", total, (b["B2"] + b["B4"]) * (1 + SOURCING_TOLERANCE) + SLACK_EVENTS, big,
               f"sourcing counters <= (B2+B4) x {1 + SOURCING_TOLERANCE:g}", clean)


def _finding(iv: pd.DataFrame, v: Violation) -> Finding:
    row = iv.iloc[v.row]
    end = pd.Timestamp(row["interval_end"]).isoformat()
    what = (f"system {row['system']} {row['class']} CPU {int(row['cpu'])}, interval ending {end}: counter "
            f"{v.counter} = {v.value:,.0f} breaks the physical bound {v.rule} ({v.bound:,.0f})")
    return make_finding(str(row["source"]), int(row["offset"]), "warning", "implausible", what,
                        "no machine counts this (damaged record?); the CPU-interval is left out of every sum "
                        "(--keep-implausible keeps it)", system=str(row["system"]), cpu=int(row["cpu"]),
                        time=end, counter=v.counter, value=v.value, bound=v.bound, group=v.group)


def _findings(iv: pd.DataFrame, R: _Rules) -> list[Finding]:
    """One finding per violating row, at most :data:`_DETAIL_LIMIT` per file; the rest of a file in one."""
    out: list[Finding] = []
    rows = np.flatnonzero(R.hit)
    if not len(rows):
        return out
    files, file_of = np.unique(iv["source"].astype(str).to_numpy()[rows], return_inverse=True)
    offsets = iv["offset"].to_numpy(dtype=np.int64)
    for k, file in enumerate(files):
        mine = rows[file_of == k]
        out += [_finding(iv, R.violation(r)) for r in mine[:_DETAIL_LIMIT]]
        rest = mine[_DETAIL_LIMIT:]
        if len(rest):
            groups = sorted(set(R.group[rest].tolist()))
            out.append(make_finding(str(file), int(offsets[rest].min()), "warning", "implausible",
                                    f"{len(rest)} more CPU-interval(s) break physical bounds ({', '.join(groups)})",
                                    "they are left out of every sum (--keep-implausible keeps them)",
                                    count=len(rest), groups=",".join(groups)))
    return out


def _set_quality(iv: pd.DataFrame, qb: np.ndarray) -> None:
    codes, uniq = pd.factorize(qb)
    iv["qbits"] = qb
    iv["quality"] = categorical_from_codes(quality_strings(uniq), codes)


def scan(iv: pd.DataFrame, sets: dict[str, FormulaSet], counters: Sequence[str]) -> _Rules:
    """The bounds each row breaks, found without changing ``iv`` (for :func:`check`, which marks them: the scan
    may run beside other work reading the frame)."""
    R = _scan(iv, sets, counters)
    R.counters = [c for c in counters if c in iv.columns]
    return R


def _covers(iv: pd.DataFrame, sets: dict[str, FormulaSet], counters: Sequence[str], R: _Rules) -> bool:
    """``R`` (a :func:`scan` of ``iv``) is what a scan with ``counters`` finds: the same rows, every counter it
    tested among them, and each other one (a column added since, as the UTC offsets) a column no rule but the
    wall-clock and event bounds reads, which no row breaks (then no row's first violation can change)."""
    have = [c for c in counters if c in iv.columns]
    done = getattr(R, "counters", None)
    if done is None or len(R.hit) != len(iv) or [c for c in have if c in set(done)] != done:
        return False
    extra = [c for c in have if c not in done]
    if not extra:
        return True
    special = {"B0", "B1", "B2", "B3", "B4", "B5", "M448", "M449", *PROBLEM_OF}
    special |= {c for cs in CYCLE_COUNTERS.values() for c in cs}
    special |= {c for fs in sets.values() for c in sourcing_counters(fs)}
    if special & set(extra):
        return False
    speed = iv["cpu_speed"].to_numpy(dtype=np.float64)
    secs = iv["interval_s"].to_numpy(dtype=np.float64)
    with np.errstate(invalid="ignore"):
        wall = np.where(speed > 0, speed * 1e6 * (secs * (1 + CYCLE_TOLERANCE) + CLOCK_SKEW_S), np.nan)
        events = EVENTS_PER_CYCLE * iv["B0"].to_numpy(dtype=np.float64) + SLACK_EVENTS if "B0" in have else None
        for c in extra:
            bound = EVENTS_PER_CYCLE * (2.0 if c[0] == "M" else 1.0) * wall
            if events is not None and c[0] in "BPKE":
                bound = np.fmin(bound, events)
            if (iv[c].to_numpy(dtype=np.float64) > bound).any():
                return False
    return True


def check(iv: pd.DataFrame, sets: dict[str, FormulaSet], counters: Sequence[str],
          scanned: _Rules | None = None) -> list[Finding]:
    """Mark (in place) every row of a fresh intervals frame that breaks a physical bound with
    :data:`IMPLAUSIBLE`; returns one finding per such row (see :func:`_findings`).  ``scanned``: a
    :func:`scan` of the frame made before, used when it finds what a scan now would (:func:`_covers`)."""
    R = scanned if scanned is not None and _covers(iv, sets, counters, scanned) else _scan(iv, sets, counters)
    if R.hit.any():
        _set_quality(iv, np.where(R.hit, iv["qbits"].to_numpy(dtype=np.int64) | IMPLAUSIBLE,
                                  iv["qbits"].to_numpy(dtype=np.int64)))
    return _findings(iv, R)


def left_out(iv: pd.DataFrame, counters: Sequence[str], keep: bool) -> pd.DataFrame:
    """``iv`` with the counters of every :data:`IMPLAUSIBLE` row NaN and :data:`LEFT_OUT` set (a new frame;
    ``iv`` itself is never changed: it may be on its way to the workspace cache); ``iv`` as it is with
    ``keep`` or when no row is implausible."""
    if keep or not len(iv):
        return iv
    qb = iv["qbits"].to_numpy(dtype=np.int64)
    bad = (qb & IMPLAUSIBLE) != 0
    if not bad.any():
        return iv
    out = iv.copy()
    cols = [out.columns.get_loc(c) for c in counters]
    out.iloc[np.flatnonzero(bad), cols] = np.nan
    _set_quality(out, np.where(bad, qb | LEFT_OUT, qb))
    return out
