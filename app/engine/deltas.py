"""Counter samples -> per-CPU interval deltas (metrics.md section 7).

``absolute`` rows (SMF 113 subtype 2, z/VM D5R13) are differenced per
(cec, system, class, cpu, run_start) in time order -- the key ignores the file,
so a run split over several files is joined.  The first row of a run is only a
baseline; a counter that goes backwards, a ``first`` flag, a CFVN/CSVN, counter
set or CPU speed change starts a new run (a gap, never a negative delta) and is
a finding.  ``delta`` rows are used as they are.  Everything is vectorized.

The samples are never joined into one frame: identity columns are kept as numpy arrays (string columns as
category codes), counters are read straight from the readers' blocks, a few thousand rows at a time, only for
the rows that become intervals; the float deltas go to pandas as one block, each counter contiguous.  Work that
depends on a value (generation, counter cut, time bucket, quality text) is done once per distinct value.
Findings come from small frames of the rows concerned.  ``tests/engine/_deltas_reference.py`` keeps the
previous frame-based implementation; the two give identical intervals and findings.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from functools import partial

import numpy as np
import pandas as pd

from app.engine.aggregate import bucket_arrays
from app.engine.catalog import GENERIC, FormulaSet, select_generation
from app.engine.counter_blocks import DeltaRows
from app.engine.counter_blocks import SampleCounters as _Counters
from app.engine.parallel import start_map
from app.engine.keys import LPAR_KEY, Cols, dense, firsts_lasts, rising_within, row_key, time_order
from app.engine.record_checks import cpu_presence, run_start_changes, system_moves
from app.findings import Finding, make_finding
from app.formats.common import categorical_from_codes
from app.formats.schema import (
    BASE_OF_BIT,
    BIT_OF_LETTER,
    IDENTITY_COLUMNS,
    SET_BASIC,
    SET_MT,
    SET_PROBLEM,
    is_counter_column,
    set_size,
)

__all__ = ["QUALITY_BITS", "RUN_START_BIT", "compute_intervals", "interval_columns"]

_KEY = [*LPAR_KEY, "class", "cpu", "run_start"]        # a run: one CPU of one LPAR of one machine
_DUP_KEY = [*LPAR_KEY, "cpu", "class", "time", "kind"]
STATED_COLUMNS = ("rec_start", "rec_end")   # SMF 113 identification section: the interval as the record states it
# optional sample column naming the file a sample belongs to when ``source`` does not (the fleet dataset: a sample
# it holds already, or the file's own earlier chunk, stands in for the file's copy under another source name)
FILE_COLUMN = "_file"
STATED_TOLERANCE_S = 1.0     # HIS writes the record right after the interval: CTM and IntervalEnd within a second
_ROWS = 2048           # rows gathered at a time (a MB or two of counters: stays in cache)
_CHECK_ROWS = 512      # rows of running totals compared at a time (two gathers of their counters beside the
                       # chunk's samples: 0.2 MB each, not 0.9; the extract's peak sits in this step)
_GROUP = 8             # columns read from Parquet: deltas made 8 counters at a time, each let go once made
_NS = 1_000_000_000
_EMIT = ["source", "offset", "cec", "system", "time", "cpu"]
# quality codes carried per interval row (bit -> code); '' = clean
QUALITY_BITS = {"lost-data": 1, "mt-lost-data": 2, "odd-length": 4, "csvn-mismatch": 8, "generation-by-csvn": 16,
                "generic-formulas": 32, "partial-sets": 64, "implausible": 128, "left-out": 256}  # plausibility.py
# not a quality code: set by ``compute_intervals(run_start_bit=True)`` (the fleet dataset's intervals keep it) on an
# interval that runs from its run's start (or of an assumed length), not measured from its CPU's sample before:
# the usual length (the odd-length mark's measure) is taken over the others (app.dataset.stats).  Set on these few
# rather than on the measured many: intervals stored before the bit was kept count as measured, nearly all are
RUN_START_BIT = 512
_EMIT_LIMIT = 10


def quality_strings(qbits: np.ndarray) -> np.ndarray:
    """Quality bit masks -> comma-separated codes ('' when clean)."""
    qbits = np.asarray(qbits, dtype=np.int64)
    out = np.full(len(qbits), "", dtype=object)
    for v in np.unique(qbits):
        if v:
            out[qbits == v] = ",".join(c for c, b in QUALITY_BITS.items() if v & b)
    return out


def emit(rows: pd.DataFrame, severity: str, code: str, what: str, meaning: str) -> list[Finding]:
    """One finding per (file, machine, system, time) of ``rows``; at most a few per file, machine and system.

    ``what`` may use ``{system}``, ``{time}``, ``{cpus}`` and ``{n}``.
    """
    if rows is None or not len(rows):
        return []
    out: list[Finding] = []
    r = rows[["source", "offset", "cec", "system", "time", "cpu"]]
    for (src, cec, system), g in r.groupby(["source", "cec", "system"], sort=False, observed=True):
        times = g.groupby("time", sort=True)
        for i, (tm, h) in enumerate(times):
            if i == _EMIT_LIMIT:
                rest = g[g["time"] >= tm]
                out.append(make_finding(str(src), int(rest["offset"].min()), severity, code,
                                        f"system {system}: {rest['time'].nunique()} more interval(s) with the "
                                        f"same condition ({code}) up to {pd.Timestamp(g['time'].max()).isoformat()}",
                                        meaning, system=system, cec=cec, count=int(rest["time"].nunique())))
                break
            cpus = ",".join(str(c) for c in sorted(set(h["cpu"].tolist())))
            out.append(make_finding(str(src), int(h["offset"].min()), severity, code,
                                    what.format(system=system, time=pd.Timestamp(tm).isoformat(), cpus=cpus,
                                                n=len(h)),
                                    meaning, system=system, cec=cec, time=pd.Timestamp(tm).isoformat(),
                                    cpus=cpus))
    return out


def interval_columns(counters: Sequence[str]) -> list[str]:
    """Column order of the intervals frame."""
    return (list(IDENTITY_COLUMNS) + ["interval_start", "interval_end", "interval_s", "bucket", "bucket_s",
                                      "cec_bucket", "cec_bucket_s", "generation", "formula_set", "quality",
                                      "qbits"] + list(counters))


def _counter_sort_key(c: str) -> tuple[int, int]:
    return ("BPKEM".index(c[0]), int(c[1:]))


def _labels_codes(f: pd.DataFrame, c: str) -> tuple[list[str], np.ndarray]:
    """String labels and per-row codes of one name column of a sample frame (as ``astype(str)`` would give)."""
    if c not in f.columns:
        return [""], np.zeros(len(f), np.int64)
    s = f[c]
    if isinstance(s.dtype, pd.CategoricalDtype):
        cat = s.array                       # the Categorical itself: its codes without a Series made of them
        if not (cat.codes < 0).any():       # (a missing value is code -1: the text way, as astype(str) gives)
            return [str(x) for x in cat.categories], cat.codes
    codes, uniq = pd.factorize(s.astype(str).to_numpy(dtype=object))
    return [str(x) for x in uniq], codes.astype(np.int64)


def _categorical(parts: list[tuple[list[str], np.ndarray]]) -> pd.Categorical:
    """One categorical over the parts, categories sorted and only those used (what ``astype("category")`` of
    the joined strings gives), built from the codes: no per-row string round trip."""
    codes, dtype = _codes_dtype(parts)
    return pd.Categorical.from_codes(codes, dtype=dtype, validate=False)


@functools.lru_cache(maxsize=256)
def _dtype_of(labels: tuple[str, ...]) -> pd.CategoricalDtype:
    """The categorical dtype of these (sorted, distinct) string categories, made once per set of them (a chunk's
    nine name columns each took one, about 0.3 ms apiece, for the same few names chunk after chunk)."""
    return pd.CategoricalDtype(pd.Index(list(labels), dtype=object).astype("str"))


def _codes_dtype(parts: list[tuple[list[str], np.ndarray]]) -> tuple[np.ndarray, pd.CategoricalDtype]:
    """The codes and dtype of :func:`_categorical` (``parts``), without the Categorical."""
    labels = sorted({x for lab, _ in parts for x in lab})
    pos = {x: i for i, x in enumerate(labels)}
    used = np.zeros(len(labels), bool)
    maps = []
    for lab, cd in parts:
        m = np.array([pos[x] for x in lab], np.int64)
        used[m[np.bincount(cd, minlength=len(lab)) > 0]] = True     # labels with rows (no sort of the codes)
        maps.append(m)
    remap = np.cumsum(used) - 1
    ctype = np.int8 if used.sum() < 127 else (np.int16 if used.sum() < 32_000 else np.int32)
    if len(parts) == 1 and used.all() and np.array_equal(maps[0], np.arange(len(labels))):
        codes = parts[0][1]           # one frame, its categories sorted and all used: its codes as they are
    else:
        codes = np.concatenate([remap[m].astype(ctype)[cd] for m, (_, cd) in zip(maps, parts)]) \
            if parts else np.zeros(0, ctype)
    k = int(used.sum())          # the code type pandas' from_codes keeps (the smallest holding k categories)
    code_type = np.int8 if k < 127 else np.int16 if k < 32_767 else np.int32 if k < 2**31 - 1 else np.int64
    return codes.astype(code_type, copy=False), _dtype_of(tuple(x for x, u in zip(labels, used) if u))


def _identity(frames: Sequence[pd.DataFrame], stated: list[str]) -> Cols:
    """Identity (and stated-interval) columns of the frames joined, as arrays (a view where one frame has the
    right dtype already)."""
    a: dict[str, np.ndarray] = {}
    cats: dict[str, pd.CategoricalDtype] = {}
    for c, t in IDENTITY_COLUMNS.items():
        if t == "category":       # factorize strings once; every later grouping works on the codes
            a[c], cats[c] = _codes_dtype([_labels_codes(f, c) for f in frames])
        else:
            parts = [f[c].to_numpy(dtype=t) if c in f.columns else np.zeros(len(f), dtype=t) for f in frames]
            a[c] = parts[0] if len(parts) == 1 else np.concatenate(parts)
    if any(FILE_COLUMN in f.columns for f in frames):
        a[FILE_COLUMN] = _codes_dtype([_labels_codes(f, FILE_COLUMN) if FILE_COLUMN in f.columns else
                                       _labels_codes(f, "source") for f in frames])[0]
    for c in stated:
        parts = [f[c].to_numpy(dtype="datetime64[ns]") if c in f.columns else
                 np.full(len(f), np.datetime64("NaT"), "datetime64[ns]") for f in frames]
        a[c] = parts[0] if len(parts) == 1 else np.concatenate(parts)
    return Cols(a, cats)


def _duplicate_findings(d: pd.DataFrame, first: pd.DataFrame) -> list[Finding]:
    """Findings for duplicate rows ``d`` (with ``first``: the first rows of every key, 'orig' = their source)."""
    d = d.merge(first, on=_DUP_KEY, how="left")
    out = []
    for (src, orig), g in d.groupby(["source", "orig"], sort=False):
        same = src == orig
        what = (f"{len(g)} record(s) repeat records already read "
                + ("earlier in the same file" if same else f"from {orig}")
                + f" (system {g['system'].iloc[0]}, first at {pd.Timestamp(g['time'].min()).isoformat()})")
        out.append(make_finding(src, int(g["offset"].min()), "warning", "duplicate-record", what,
                                "each interval is counted once", system=g["system"].iloc[0], count=len(g),
                                original=orig))
    return out


def _duplicates(S: Cols) -> tuple[np.ndarray | None, list[Finding]]:
    """Rows to keep (None = all) and findings: a repeat of (cec, system, cpu, class, time, kind) is dropped."""
    g, count = dense(*row_key(S, [c for c in _DUP_KEY if c != "time"]))
    if rising_within(g, count, S["time"].view(np.int64), strict=True)[1]:
        return None, []                   # times rise within every CPU and kind: nothing can repeat
    first = firsts_lasts(*row_key(S, _DUP_KEY))
    if first.all():
        return None, []
    dup = ~first
    cols = _DUP_KEY + ["source"]
    f = S.frame(np.flatnonzero(first), cols).rename(columns={"source": "orig"})
    d = S.frame(np.flatnonzero(dup), _DUP_KEY + ["source", "offset"])
    return np.flatnonzero(first), _duplicate_findings(d, f)


def _bits_of(counters: Sequence[str]) -> np.ndarray:
    return np.array([BIT_OF_LETTER[c[0]] for c in counters], dtype=np.int64)


def compute_intervals(frames: Sequence[pd.DataFrame], sets: dict[str, FormulaSet],
                      keep: set[str] | None = None, consume: bool = False,
                      released: Callable[[], object] | None = None, lazy: bool = False,
                      record_findings: bool = True, run_start_bit: bool = False):
    """Turn counter-sample frames into the intervals frame.

    Parameters
    ----------
    frames : sequence of DataFrame
        Counter-sample frames (``app.formats.schema``), in file order.
    sets : dict
        Formula sets (generation -> FormulaSet) used to pick each row's generation.
    keep : set of str, optional
        Counter columns to keep (``None`` = all).
    consume : bool
        ``frames`` is a list the caller hands over: it is emptied once read, and each group of counter columns
        is let go as soon as its deltas are made (a frame nobody else holds is freed while the intervals grow).
    released : callable, optional
        Called after each group of counter columns is let go (``app.memory.release``: freed columns of a frame
        read from Parquet sit in the C heap, whose pages go back to the system only when trimmed).
    lazy : bool
        Make no counter columns: return (identity frame, findings, :class:`~app.engine.counter_blocks.DeltaRows`),
        the last giving the float64 deltas of any rows of that frame, the same values as the counter columns
        (the fleet extract writes them a row group at a time: the deltas of a chunk never exist whole).
    record_findings : bool
        Make the findings of the records alone (CPUs appearing late or vanishing early, systems moving between
        CECs: :mod:`app.engine.record_checks`); False: not those (the same intervals), for a workspace whose
        findings are not shown (a big file's first part, app/ui/progressive.py).
    run_start_bit : bool
        Set :data:`RUN_START_BIT` in ``qbits`` of each interval not measured from its CPU's sample before (the
        fleet dataset's intervals: its queries take each LPAR's usual length over the dataset's other intervals).

    Returns
    -------
    (DataFrame, list of Finding)
        One row per logical CPU per interval with float64 counter deltas (NaN
        where a set is absent) and the engine findings.
    """
    cols: set[str] = set()
    for f in frames:
        cols |= {c for c in f.columns if is_counter_column(c)}
    if keep is not None:
        cols &= keep
    counters = sorted(cols, key=_counter_sort_key)
    stated = [c for c in STATED_COLUMNS if any(c in f.columns for f in frames)]
    given, frames = frames, [f for f in frames if len(f)]
    if not frames:
        return pd.DataFrame(columns=interval_columns(counters)), []
    S = _identity(frames, stated)
    C = _Counters(frames, counters)
    if consume:                       # from here on the blocks are held by C (then by its column groups) alone
        given.clear()
    del frames
    findings: list[Finding] = []
    kept, f = _duplicates(S)          # kept: sample row of each deduplicated row (None = all rows)
    findings += f
    if kept is not None:
        S = S.take(kept)

    def srow(p: np.ndarray) -> np.ndarray:        # deduplicated position -> sample row (the counters' index)
        return p if kept is None else kept[p]

    n = len(S)
    kind_abs = np.array([str(x) == "absolute" for x in S.cats["kind"].categories] + [False], bool)
    is_abs = kind_abs[S["kind"]]
    kinds_both = bool(is_abs.any() and (~is_abs).any())
    gid, count = dense(*row_key(S, _KEY + ["kind"]))
    t = S["time"].view(np.int64)
    order, rising = rising_within(gid, count, t, strict=False)
    if not rising:                    # records out of time order within a run: sort by time too
        order = np.lexsort((t, gid))
    g_s = gid[order]
    same = np.zeros(n, dtype=bool)
    same[1:] = g_s[1:] == g_s[:-1]
    prev = np.empty(n, dtype=np.int64)
    prev[0] = order[0]
    prev[1:] = order[:-1]                       # row index of the previous sample (valid where same)

    cur = order
    sets_ = S["sets"].astype(np.int64)
    first = S["first"].astype(bool)
    a = is_abs[cur]
    bits = _bits_of(counters)
    dec = np.zeros(n, dtype=bool)
    if a.any():       # runs of running totals: a change of version, sets, speed or a first flag starts a new run
        cfvn, csvn, speed = S["cfvn"], S["csvn"], S["cpu_speed"]
        verchg = same & ((cfvn[cur] != cfvn[prev]) | (csvn[cur] != csvn[prev]))
        setchg = same & (sets_[cur] != sets_[prev])
        spdchg = same & (speed[cur] != speed[prev])
        firstmid = same & first[cur]
        cand = a & same & ~(verchg | setchg | spdchg | firstmid)
        pos = np.flatnonzero(cand)
        if len(pos) and len(counters):      # a counter going backwards starts a new run
            for r0 in range(0, len(pos), _CHECK_ROWS):
                pp = pos[r0:r0 + _CHECK_ROWS]
                ci, pi = cur[pp], prev[pp]
                both = sets_[ci] & sets_[pi]
                present = (both[:, None] & bits[None, :]) != 0
                dec[pp] = ((C.full(srow(ci)) < C.full(srow(pi))) & present).any(axis=1)
        newrun = a & (~same | first[cur] | verchg | setchg | spdchg | dec)
        out_pos = np.flatnonzero(~newrun)
        oc, op = cur[out_pos], prev[out_pos]
        oa = a[out_pos]
        osame = same[out_pos]
        del cand, pos, newrun, out_pos
    else:             # deltas only (subtype 1): every record is an interval, no run can break
        verchg = setchg = spdchg = firstmid = dec
        oc, op, oa, osame = cur, prev, a, same

    # deltas: (rows x counters), straight from the readers' blocks, each counter contiguous in memory (the
    # pandas block pandas' groupby sums read fastest: metrics by interval ~0.1 s less on the month); copied on
    # the pool thread while this one makes the identity columns and findings, then on both (``deltas_done``)
    # (``DeltaRows``: the one implementation of the step, here over every row, lazily for any rows later)
    m = len(oc)
    D = np.empty((len(counters), 0 if lazy else m), dtype=np.float64).T
    step = DeltaRows(C, counters, (srow(oc), srow(op)), oa, sets_[oc] & np.where(oa, sets_[op], -1), bits)
    # frames of a column an array (read from Parquet): a group of columns at a time, each let go once made
    groups = C.column_groups(_GROUP) if consume and not lazy else None
    C = None                                        # held by the step (or by the groups) alone

    def fill(r0: int) -> None:                      # rows r0.. of D: gathers and copies release the GIL
        step.raw(D[r0:r0 + step.ROWS], slice(r0, r0 + step.ROWS))

    rows_of_blocks = groups is None
    if rows_of_blocks:
        deltas_done = start_map(fill, range(0, m, step.ROWS) if len(counters) and not lazy else ())
    else:                   # the groups hold the columns now (the step's counters none)
        step.absent_rows()
        deltas_done = start_map(partial(step.fill_group, D, released=released), groups)
        del groups
    if released is not None and rows_of_blocks and not lazy:    # the caller wants the samples' memory back and
        deltas_done()                                   # the blocks go only as a whole: made first, on both threads
        step.let_go()

    # findings about runs
    def rows_at(mask: np.ndarray) -> pd.DataFrame | None:
        return S.frame(cur[np.flatnonzero(mask)], _EMIT) if mask.any() else None

    findings += emit(rows_at(a & dec), "warning", "counter-reset",
                     "counters of system {system} went backwards at {time} (CPU {cpus})",
                     "counter reset, IPL or HIS restart: a new run starts there, the interval is a gap")
    findings += emit(rows_at(a & verchg), "warning", "version-change",
                     "counter version numbers (CFVN/CSVN) of system {system} changed at {time} (CPU {cpus})",
                     "a new run starts there; the interval across the change is a gap")
    findings += emit(rows_at(a & setchg & ~verchg), "info", "sets-change",
                     "active counter sets of system {system} changed at {time} (CPU {cpus})",
                     "a new run starts there; the interval across the change is a gap")
    findings += emit(rows_at(a & spdchg), "warning", "speed-change",
                     "CPU speed of system {system} changed at {time} (CPU {cpus})",
                     "a new run starts there; the interval across the change is a gap")
    findings += emit(rows_at(a & firstmid & ~(verchg | setchg | spdchg)), "info", "new-run",
                     "a new collection run of system {system} starts at {time} (CPU {cpus})",
                     "the first record of a run is a baseline only")
    t_order = time_order(S["time"])           # the samples in time order, shared by the record-level checks
    findings += run_start_changes(S, t_order)
    # the other record-level checks' findings (of the samples alone) made now, listed after the intervals' own
    # (_data_checks): the samples' columns and working arrays go before the interval rows' checks and buckets
    rec_findings = cpu_presence(S, t_order) + system_moves(S, t_order) if record_findings else []
    del gid, order, g_s, cur, sets_, t_order, rows_at, same, first, is_abs
    # the dataset's samples name their file (a stored sample held by the file too counts as the file's)
    same_file = S[FILE_COLUMN][op] == S[FILE_COLUMN][oc] if FILE_COLUMN in S.a else None
    prev_t = t[op]
    del t, prev, op

    O = S.take(oc)                              # the identity columns of the interval rows
    del S, oc
    O.detach()              # the samples' columns freed (their codes are made again from the interval rows')
    istart = np.where(osame, prev_t, O["run_start"].view(np.int64)).view("datetime64[ns]")
    del prev_t
    iend = O["time"].copy()
    if "rec_start" in O.a:
        findings += _stated_intervals(O, osame, istart, iend)
    s_len = pd.Series(iend - istart).dt.total_seconds().to_numpy(dtype=np.float64, copy=True)
    s_len[(s_len <= 0) | ~np.isfinite(s_len)] = np.nan
    miss = np.isnan(s_len)
    if miss.any():   # a first delta record without run start (z/VM): assume the system's usual length
        med = _lpar_median(O, s_len)
        fill = miss & np.isfinite(med)
        if fill.any():
            s_len[fill] = med[fill]
            istart[fill] = (pd.Series(O["time"][fill]) - pd.to_timedelta(med[fill], unit="s")).to_numpy()
    O.a["interval_start"], O.a["interval_end"], O.a["interval_s"] = istart, iend, s_len
    O.a["_measured"] = np.asarray(osame, dtype=bool)     # the start is the CPU's sample before (not a run start)
    if same_file is not None:
        # ... of the same file (the dataset's extract of one file): an interval from the dataset's stored sample
        # before a gap a later file fills is a weaker measure of the usual length than the file's own (the
        # mark stored with the file; a query marks by the whole dataset's measured intervals, as report does)
        O.a["_same_file"] = O.a["_measured"] & same_file
    del same_file

    # both kinds for the same interval: keep the delta row
    keep_rows = None
    if kinds_both:
        okind = kind_abs[O["kind"]]
        kf = O.frame(cols=[*LPAR_KEY, "cpu", "class", "time"])    # the same CPU interval of the same machine
        dkeys = pd.MultiIndex.from_frame(kf.loc[~okind])
        akeys = pd.MultiIndex.from_frame(kf)
        drop = okind & akeys.isin(dkeys)
        if drop.any():
            r = O.frame(np.flatnonzero(drop), ["cec", "system", "source", "offset"])
            for (cec, system), g in r.groupby(["cec", "system"], sort=False, observed=True):
                findings.append(make_finding(
                    str(g["source"].iloc[0]), int(g["offset"].iloc[0]), "info", "both-kinds",
                    f"system {system} on {cec}: {len(g)} interval(s) are present both as subtype-1 style deltas "
                    "and as running totals", "the delta records are used, the running totals only for the rest",
                    system=system, cec=cec, count=len(g)))
            keep_rows = np.flatnonzero(~drop)
            O = O.take(keep_rows)
            O.detach()

    qb, f, mt_kill = _data_checks(O, counters, rec_findings)
    findings += f
    gen_cat, fset_cat, qb, f = _generations(O, sets, qb)
    findings += f
    _buckets(O)
    deltas_done()
    step.settle(keep_rows, mt_kill, _uninstalled(O, counters))
    if not lazy:
        step.let_go()
        if keep_rows is not None:
            D = D.T[:, keep_rows].T
        step.marks(D)
    data = {c: O.series(c) for c in IDENTITY_COLUMNS}
    for c in ("interval_start", "interval_end", "interval_s", "bucket", "bucket_s", "cec_bucket", "cec_bucket_s"):
        data[c] = O[c]
    data["generation"], data["formula_set"] = gen_cat, fset_cat
    data["quality"] = _quality_categorical(qb)
    data["qbits"] = qb | np.where(O["_measured"], 0, RUN_START_BIT) if run_start_bit else qb
    if lazy:        # the columns as they are (not consolidated: no second copy beside the samples held)
        return pd.DataFrame(data, copy=False), findings, step
    # the identity columns as they are, not consolidated into blocks: a copy of all of them (40 MB on the month)
    # beside the interval rows and the deltas was the top of the cold export's intervals step
    ident = pd.DataFrame(data, copy=False)
    cnt = pd.DataFrame(D, columns=counters, copy=False)         # D is ours: one block, no copy
    return pd.concat([ident, cnt], axis=1), findings


def _quality_categorical(qb: np.ndarray) -> pd.Categorical:
    """``quality_strings(qb)`` as a categorical, the text made once per distinct bit mask."""
    codes, uniq = pd.factorize(qb)
    return categorical_from_codes(quality_strings(uniq), codes)


def _stated_intervals(O: Cols, osame: np.ndarray, istart: np.ndarray, iend: np.ndarray) -> list[Finding]:
    """SMF 113 identification section (smf113.md 5): where a record states its interval, use it, after checking
    it against the CTMs of consecutive records of the same CPU (previous CTM = start, this CTM = end).
    Sets ``istart``/``iend`` in place."""
    rs, re_ = O["rec_start"], O["rec_end"]
    has = ~np.isnat(rs) & ~np.isnat(re_) & (re_ > rs)
    if not has.any():
        return []
    tol = np.timedelta64(int(STATED_TOLERANCE_S * 1e9), "ns")
    end = O["time"]
    off_start = osame & has & ~np.isnat(istart) & (np.abs(rs - istart) > tol)
    off_end = has & (np.abs(re_ - end) > tol)
    bad = off_start | off_end
    findings = emit(O.frame(np.flatnonzero(bad), _EMIT), "warning", "interval-mismatch",
                    "system {system}: the interval stated in the record (identification section) disagrees by more "
                    f"than {STATED_TOLERANCE_S:g} s with the times of consecutive records at {{time}} (CPU {{cpus}})",
                    "the stated interval was used for rates; check for lost or out-of-order records") \
        if bad.any() else []
    istart[has] = rs[has]
    iend[has] = re_[has]
    return findings


def _data_checks(O: Cols, counters: Sequence[str],
                 rec_findings: list[Finding]) -> tuple[np.ndarray, list[Finding], tuple | None]:
    """Quality bits and findings: lost data, MT per core, odd lengths, then ``rec_findings`` (the record-level
    checks': CPUs coming and going, systems moving between CECs or changing machine, made before the samples'
    columns were let go); and the deltas to NaN (rows x MT counters), or None."""
    findings: list[Finding] = []
    kill_at = None
    qb = np.zeros(len(O), dtype=np.int64)
    lost = O["lost"].astype(bool)
    qb[lost] |= QUALITY_BITS["lost-data"]
    if lost.any():
        findings += emit(O.frame(np.flatnonzero(lost), _EMIT), "warning", "lost-data",
                         "the hardware lost counter data of system {system} in the interval ending {time} (CPU {cpus})",
                         "the interval is kept but marked and left out of the workload hint")
    mj = [j for j, c in enumerate(counters) if c[0] == "M"]
    if mj:
        mtl = O["mt_lost"].astype(bool)
        qb[mtl] |= QUALITY_BITS["mt-lost-data"]
        has_mt = (O["sets"] & SET_MT) != 0
        core = O["core"]
        # MT-diagnostic counters are per core: keep one CPU (the lowest id) per core and interval
        rows = np.flatnonzero(has_mt & (core >= 0))
        kill = mtl.copy()
        if len(rows):
            cand = O.frame(rows, ["cec", "system", "core", "time", "cpu"], index=rows)
            extra = cand.sort_values("cpu").duplicated(["cec", "system", "core", "time"], keep="first")
            kill[extra.index[extra.to_numpy()]] = True
        if kill.any():
            kill_at = (np.flatnonzero(kill)[:, None], np.array(mj)[None, :])
        if mtl.any():
            findings += emit(O.frame(np.flatnonzero(mtl), _EMIT), "warning", "mt-lost-data",
                             "MT-diagnostic counter data of system {system} was lost in the interval ending {time}",
                             "thread density and core-active metrics of the interval are not shown")
    s = O["interval_s"]
    # the usual length: over the intervals measured between two samples of a CPU (of any file: where the files
    # are cut does not move it), else over all of them (a first interval back to its run's start is no measure
    # of it); the dataset's extract of one file takes it over the file's own first (``_same_file``)
    med = np.full(len(s), np.nan)
    for k in ("_same_file", "_measured", None):
        if k is not None and k not in O.a:
            continue
        alone = ~np.isfinite(med) & np.isfinite(s)
        if not alone.any():
            break
        med = np.where(np.isfinite(med), med, _lpar_median(O, s if k is None else np.where(O[k], s, np.nan)))
    odd = np.isfinite(s) & np.isfinite(med) & (np.abs(s - med) > 0.1 * med)
    qb[odd] |= QUALITY_BITS["odd-length"]
    if odd.any():
        findings += emit(O.frame(np.flatnonzero(odd), _EMIT), "warning", "odd-length",
                         "an interval of system {system} ending {time} differs by more than 10% from the usual "
                         "length (CPU {cpus})", "busy and rates of that interval are less comparable")
    findings += rec_findings
    return qb, findings, kill_at


def _generations(O: Cols, sets: dict[str, FormulaSet], qb: np.ndarray):
    """``catalog.assign_generations`` per distinct (machine type, CSVN): generation and formula-set
    categoricals, quality bits, findings."""
    findings: list[Finding] = []
    combo, k = dense(*row_key(O, ["machine_type", "csvn"]))
    first_row = np.full(k, len(combo), np.int64)
    np.minimum.at(first_row, combo, np.arange(len(combo)))
    mts = O.cats["machine_type"].categories
    gens, fsets, qadd = [], [], np.zeros(k, np.int64)
    sysk = None
    for cid in range(k):
        i0 = first_row[cid]
        mt, csvn = str(mts[O["machine_type"][i0]]), int(O["csvn"][i0])
        g, how = select_generation(sets, mt, csvn)
        gens.append(g)
        fsets.append(sets[g].version)
        if how == "csvn-mismatch":
            code = "csvn-mismatch"
        elif how == "by-csvn":
            code = "generation-by-csvn"
        elif how == "generic" or g == GENERIC:
            code = "generic-formulas"
        else:
            continue
        qadd[cid] = QUALITY_BITS[code]
        idx = np.flatnonzero(combo == cid)
        if sysk is None:
            sysk = row_key(O, LPAR_KEY)
        firsts = O.frame(idx[firsts_lasts(sysk[0][idx], sysk[1])], ["source", "offset", "system"])
        for x in firsts.itertuples(index=False):
            if code == "csvn-mismatch":
                findings.append(make_finding(
                    str(x.source), int(x.offset), "warning", "csvn-mismatch",
                    f"system {x.system}: machine type {mt} is {g} (CSVN {sets[g].csvn}) but the records "
                    f"carry CSVN {csvn}", f"the {g} formulas are used; check the extended-counter metrics",
                    system=x.system, machine_type=mt, csvn=csvn))
            elif code == "generation-by-csvn":
                findings.append(make_finding(
                    str(x.source), int(x.offset), "warning", "unknown-machine-type",
                    f"system {x.system}: machine type {mt!r} is not known; CSVN {csvn} points to {g}",
                    f"the {g} formulas are used", system=x.system, machine_type=mt, csvn=csvn))
            else:
                findings.append(make_finding(
                    str(x.source), int(x.offset), "warning", "no-formula-set",
                    f"system {x.system}: neither machine type {mt!r} nor CSVN {csvn} identifies a generation",
                    "only generation-independent metrics (CPI, L1MP, PRBSTATE, LPARCPU, Eff GHz, MIPS) are shown",
                    system=x.system, machine_type=mt, csvn=csvn))
    if qadd.any():
        qb = qb | qadd[combo]
    return categorical_from_codes(np.array(gens, dtype=object), combo), \
        categorical_from_codes(np.array(fsets, dtype=object), combo), qb, findings


def _lpar_median(O: Cols, v: np.ndarray) -> np.ndarray:
    """Each row's median of ``v`` over the rows of its LPAR (``LPAR_KEY``: never another machine's clone)."""
    g = dense(*row_key(O, LPAR_KEY))[0]
    return pd.Series(v).groupby(g, sort=False).transform("median").to_numpy(dtype=np.float64)


def _uninstalled(O: Cols, counters: Sequence[str]) -> tuple[np.ndarray, dict[int, np.ndarray]]:
    """Each row's version pair (CFVN, CSVN) code, and per code with any the positions of the counters beyond
    the set sizes it implies (metrics.md 1.1)."""
    if not len(O) or not counters:
        return np.zeros(len(O), np.int64), {}
    vers, k = dense(*row_key(O, ["cfvn", "csvn"]))
    first = np.full(k, len(vers), np.int64)
    np.minimum.at(first, vers, np.arange(len(vers)))
    out = {}
    for v in range(k):
        cfvn, csvn = int(O["cfvn"][first[v]]), int(O["csvn"][first[v]])
        cut = []
        for j, c in enumerate(counters):
            bit = BIT_OF_LETTER[c[0]]
            governing = cfvn if bit in (SET_BASIC, SET_PROBLEM) else csvn
            if governing > 0 and int(c[1:]) >= BASE_OF_BIT[bit] + set_size(bit, cfvn, csvn):
                cut.append(j)
        if cut:
            out[v] = np.array(cut, np.int64)
    return vers, out


def _buckets(O: Cols) -> None:
    """``aggregate.add_buckets`` on the arrays (one rule: ``aggregate.bucket_arrays``), grouping by the CEC /
    system codes instead of their joined strings: bucket, bucket_s, cec_bucket, cec_bucket_s."""
    t = O["interval_end"].view(np.int64)
    sys_codes = dense(*row_key(O, ["cec", "system"]))[0]
    cec_codes = O["cec"]
    sys_rows = _rows_by_code(sys_codes)
    cec_of = {k: int(cec_codes[idx[0]]) for k, idx in sys_rows.items()}     # a system key holds one CEC
    cecs = [(idx, [k for k in sys_rows if cec_of[k] == kc]) for kc, idx in _rows_by_code(cec_codes).items()]
    b, bl, cb, cbl = bucket_arrays(t, O["interval_s"], sys_rows, cecs)
    O.a["bucket"] = b.view("datetime64[ns]")
    O.a["bucket_s"] = bl
    O.a["cec_bucket"] = cb.view("datetime64[ns]")
    O.a["cec_bucket_s"] = cbl


def _rows_by_code(codes: np.ndarray) -> dict[int, np.ndarray]:
    """Row indices (ascending) of each code value present, with one stable sort."""
    if not len(codes):
        return {}
    small = len(codes) and 0 <= codes.min() and codes.max() < 2 ** 15
    o = np.argsort(codes.astype(np.int16) if small else codes, kind="stable")   # int16: a radix sort
    cs = codes[o]
    cut = np.flatnonzero(cs[1:] != cs[:-1]) + 1
    starts = np.concatenate(([0], cut))
    ends = np.concatenate((cut, [len(cs)]))
    return {int(cs[a]): o[a:e] for a, e in zip(starts, ends)}
