"""FROZEN REFERENCE for tests only: app/engine/deltas.py as it was before the fast paths (commit 6db62c2).

The fast compute_intervals must give identical intervals and findings (tests/engine/test_deltas_fast.py).
Not used by the application.  Original docstring:

Counter samples -> per-CPU interval deltas (metrics.md section 7).

``absolute`` rows (SMF 113 subtype 2, z/VM D5R13) are differenced per
(cec, system, class, cpu, run_start) in time order -- the key ignores the file,
so a run split over several files is joined.  The first row of a run is only a
baseline; a counter that goes backwards, a ``first`` flag, a CFVN/CSVN, counter
set or CPU speed change starts a new run (a gap, never a negative delta) and is
a finding.  ``delta`` rows are used as they are.  Everything is vectorized.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from app.engine.aggregate import add_buckets
from app.engine.catalog import GENERIC, FormulaSet, select_generation
from app.findings import Finding, make_finding
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

__all__ = ["compute_intervals"]

_STR_COLS = [c for c, t in IDENTITY_COLUMNS.items() if t == "category"]
_LPAR = ["cec", "lpar", "system"]    # issue 20: an LPAR of one machine, never a system id alone
_KEY = [*_LPAR, "class", "cpu", "run_start"]
_DUP_KEY = [*_LPAR, "cpu", "class", "time", "kind"]
STATED_COLUMNS = ("rec_start", "rec_end")   # SMF 113 identification section: the interval as the record states it
STATED_TOLERANCE_S = 1.0     # HIS writes the record right after the interval: CTM and IntervalEnd within a second
_CHUNK = 24
_ROWS = 1 << 16
# quality codes carried per interval row (bit -> code); '' = clean
QUALITY_BITS = {"lost-data": 1, "mt-lost-data": 2, "odd-length": 4, "csvn-mismatch": 8,
                "generation-by-csvn": 16, "generic-formulas": 32, "partial-sets": 64}
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
    if isinstance(s.dtype, pd.CategoricalDtype) and not s.isna().any():
        return [str(x) for x in s.cat.categories], s.cat.codes.to_numpy(dtype=np.int64)
    codes, uniq = pd.factorize(s.astype(str).to_numpy(dtype=object))
    return [str(x) for x in uniq], codes.astype(np.int64)


def _categorical(parts: list[tuple[list[str], np.ndarray]]) -> pd.Categorical:
    """One categorical over the parts, categories sorted and only those used (what ``astype("category")`` of
    the joined strings gives), built from the codes: no per-row string round trip."""
    labels = sorted({x for lab, _ in parts for x in lab})
    pos = {x: i for i, x in enumerate(labels)}
    codes = np.concatenate([np.array([pos[x] for x in lab], np.int64)[cd] for lab, cd in parts]) \
        if parts else np.zeros(0, np.int64)
    used = np.zeros(len(labels), bool)
    used[np.unique(codes)] = True
    if not used.all():
        remap = np.cumsum(used) - 1
        codes = remap[codes]
        labels = [x for x, u in zip(labels, used) if u]
    return pd.Categorical.from_codes(codes, categories=pd.Index(labels, dtype=object).astype("str"))


def _prepare(frames: Sequence[pd.DataFrame], keep: set[str] | None) -> tuple[pd.DataFrame, list[str]]:
    cols: set[str] = set()
    for f in frames:
        cols |= {c for c in f.columns if is_counter_column(c)}
    if keep is not None:
        cols &= keep
    counters = sorted(cols, key=_counter_sort_key)
    stated = [c for c in STATED_COLUMNS if any(c in f.columns for f in frames)]
    frames = [f for f in frames if len(f)]
    if not frames:
        return pd.DataFrame(columns=list(IDENTITY_COLUMNS) + counters), counters
    data: dict[str, object] = {}
    for c, t in IDENTITY_COLUMNS.items():
        if t == "category":       # factorize strings once; every later groupby works on the codes
            data[c] = _categorical([_labels_codes(f, c) for f in frames])
        else:
            data[c] = np.concatenate([f[c].to_numpy(dtype=t) if c in f.columns else np.zeros(len(f), dtype=t)
                                      for f in frames])
    for c in stated:
        data[c] = np.concatenate([f[c].to_numpy(dtype="datetime64[ns]") if c in f.columns else
                                  np.full(len(f), np.datetime64("NaT"), "datetime64[ns]") for f in frames])
    # the counters as one (rows x counters) block: one copy, handed to pandas as a single block
    block = np.zeros((sum(len(f) for f in frames), len(counters)), np.uint64)
    r = 0
    for f in frames:
        have = [j for j, c in enumerate(counters) if c in f.columns]
        if len(have) == len(counters):
            block[r:r + len(f)] = f[counters].to_numpy(dtype=np.uint64)
        else:
            for j in have:
                block[r:r + len(f), j] = f[counters[j]].to_numpy(dtype=np.uint64)
        r += len(f)
    df = pd.concat([pd.DataFrame(data), pd.DataFrame(block, columns=counters, copy=False)], axis=1)
    return df, counters


def _duplicates(df: pd.DataFrame) -> tuple[pd.DataFrame, list[Finding]]:
    dup = df.duplicated(_DUP_KEY, keep="first").to_numpy()
    if not dup.any():
        return df, []
    first = df.loc[~dup, _DUP_KEY + ["source"]].rename(columns={"source": "orig"})
    d = df.loc[dup, _DUP_KEY + ["source", "offset"]].merge(first, on=_DUP_KEY, how="left")
    out = []
    for (src, orig), g in d.groupby(["source", "orig"], sort=False):
        same = src == orig
        what = (f"{len(g)} record(s) repeat records already read "
                + ("earlier in the same file" if same else f"from {orig}")
                + f" (system {g['system'].iloc[0]}, first at {pd.Timestamp(g['time'].min()).isoformat()})")
        out.append(make_finding(src, int(g["offset"].min()), "warning", "duplicate-record", what,
                                "each interval is counted once", system=g["system"].iloc[0], count=len(g),
                                original=orig))
    return df.loc[~dup].reset_index(drop=True), out


def _bits_of(counters: Sequence[str]) -> np.ndarray:
    return np.array([BIT_OF_LETTER[c[0]] for c in counters], dtype=np.int64)


def compute_intervals(frames: Sequence[pd.DataFrame], sets: dict[str, FormulaSet],
                      keep: set[str] | None = None) -> tuple[pd.DataFrame, list[Finding]]:
    """Turn counter-sample frames into the intervals frame.

    Parameters
    ----------
    frames : sequence of DataFrame
        Counter-sample frames (``app.formats.schema``), in file order.
    sets : dict
        Formula sets (generation -> FormulaSet) used to pick each row's generation.
    keep : set of str, optional
        Counter columns to keep (``None`` = all).

    Returns
    -------
    (DataFrame, list of Finding)
        One row per logical CPU per interval with float64 counter deltas (NaN
        where a set is absent) and the engine findings.
    """
    df, counters = _prepare(frames, keep)
    if not len(df):
        return pd.DataFrame(columns=interval_columns(counters)), []
    findings: list[Finding] = []
    df, f = _duplicates(df)
    findings += f

    n = len(df)
    kind = df["kind"].to_numpy(dtype=object)
    is_abs = kind == "absolute"
    gid = df.groupby(_KEY + ["kind"], sort=False, dropna=False, observed=True).ngroup().to_numpy()
    t = df["time"].to_numpy(dtype="datetime64[ns]").view(np.int64)
    order = np.lexsort((t, gid))
    g_s = gid[order]
    same = np.zeros(n, dtype=bool)
    same[1:] = g_s[1:] == g_s[:-1]
    prev = np.empty(n, dtype=np.int64)
    prev[0] = order[0]
    prev[1:] = order[:-1]                       # row index of the previous sample (valid where same)

    def col(name: str) -> np.ndarray:
        return df[name].to_numpy()

    cur = order
    sets_ = col("sets").astype(np.int64)
    first = col("first").astype(bool)
    a = is_abs[cur]
    verchg = same & ((col("cfvn")[cur] != col("cfvn")[prev]) | (col("csvn")[cur] != col("csvn")[prev]))
    setchg = same & (sets_[cur] != sets_[prev])
    spdchg = same & (col("cpu_speed")[cur] != col("cpu_speed")[prev])
    firstmid = same & first[cur]
    cand = a & same & ~(verchg | setchg | spdchg | firstmid)
    C = df[counters].to_numpy(dtype=np.uint64) if counters else np.zeros((n, 0), np.uint64)
    bits = _bits_of(counters)
    dec = np.zeros(n, dtype=bool)
    pos = np.flatnonzero(cand)
    if len(pos) and len(counters):
        ci, pi = cur[pos], prev[pos]
        both = sets_[ci] & sets_[pi]
        for s in range(0, len(counters), _CHUNK):
            sl = slice(s, s + _CHUNK)
            present = (both[:, None] & bits[None, sl]) != 0
            dec[pos] |= ((C[ci, sl] < C[pi, sl]) & present).any(axis=1)
    newrun = a & (~same | first[cur] | verchg | setchg | spdchg | dec)
    out_pos = np.flatnonzero(~newrun)
    oc, op = cur[out_pos], prev[out_pos]
    oa = a[out_pos]
    osame = same[out_pos]

    # findings about runs
    def rows_at(mask: np.ndarray) -> pd.DataFrame:
        return df.iloc[cur[np.flatnonzero(mask)]]

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
    findings += _run_start_changes(df, is_abs)

    # deltas
    if len(counters):
        cur_bits = sets_[oc]
        prev_bits = np.where(oa, sets_[op], -1)
        mask_bits = cur_bits & prev_bits
        D = np.empty((len(oc), len(counters)), dtype=np.float64)
        for s in range(0, len(counters), _CHUNK):
            sl = slice(s, s + _CHUNK)
            for r0 in range(0, len(oc), _ROWS):      # row slices too: temporaries stay small (peak memory)
                rs = slice(r0, r0 + _ROWS)
                vals = C[oc[rs], sl]
                sub = np.where(oa[rs, None], C[op[rs], sl], np.uint64(0))
                d = (vals - sub).astype(np.float64)
                present = (mask_bits[rs, None] & bits[None, sl]) != 0
                d[~present] = np.nan
                D[rs, sl] = d
    else:
        D = np.zeros((len(oc), 0))
    # the raw counters are no longer needed: drop them before gathering the rows (no 368,640 x counters take)
    del C
    df = df.drop(columns=counters)
    out = df.iloc[oc].reset_index(drop=True)
    t_prev = np.where(osame, t[op], out["run_start"].to_numpy(dtype="datetime64[ns]").view(np.int64))
    out["interval_start"] = t_prev.view("datetime64[ns]")
    out["interval_end"] = out["time"]
    if "rec_start" in out.columns:
        findings += _stated_intervals(out, osame)
    s_len = (out["interval_end"] - out["interval_start"]).dt.total_seconds().to_numpy(dtype=np.float64, copy=True)
    s_len[(s_len <= 0) | ~np.isfinite(s_len)] = np.nan
    out["interval_s"] = s_len
    miss = np.isnan(s_len)
    if miss.any():   # a first delta record without run start (z/VM): assume the system's usual length
        med = out.groupby(_LPAR, sort=False, observed=True)["interval_s"].transform("median").to_numpy(dtype=np.float64)
        fill = miss & np.isfinite(med)
        if fill.any():
            s_len[fill] = med[fill]
            out["interval_s"] = s_len
            out.loc[fill, "interval_start"] = out.loc[fill, "time"] - pd.to_timedelta(med[fill], unit="s")
    cnt = pd.DataFrame(D, columns=counters, copy=False)      # D is ours: no second copy of the deltas
    out = pd.concat([out, cnt], axis=1)

    # both kinds for the same interval: keep the delta row
    if is_abs.any() and (~is_abs).any():
        okind = out["kind"].to_numpy(dtype=object)
        k = [*_LPAR, "cpu", "class", "time"]
        dkeys = pd.MultiIndex.from_frame(out.loc[okind == "delta", k])
        akeys = pd.MultiIndex.from_frame(out[k])
        drop = (okind == "absolute") & akeys.isin(dkeys)
        if drop.any():
            r = out.loc[drop]
            for (cec, system), g in r.groupby(["cec", "system"], sort=False, observed=True):
                findings.append(make_finding(
                    str(g["source"].iloc[0]), int(g["offset"].iloc[0]), "info", "both-kinds",
                    f"system {system} on {cec}: {len(g)} interval(s) are present both as subtype-1 style deltas "
                    "and as running totals", "the delta records are used, the running totals only for the rest",
                    system=system, cec=cec, count=len(g)))
            out = out.loc[~drop].reset_index(drop=True)

    out, f = data_checks(out, df, counters)
    findings += f
    out, f = assign_generations(out, sets, QUALITY_BITS)
    findings += f
    cut_uninstalled(out, counters)
    out = add_buckets(out)
    out["quality"] = quality_strings(out["qbits"].to_numpy())
    for c in _STR_COLS:
        out[c] = out[c].astype("category")
    for c in ("generation", "formula_set", "quality"):
        out[c] = out[c].astype("category")
    return out[interval_columns(counters)], findings




def _stated_intervals(out: pd.DataFrame, osame: np.ndarray) -> list[Finding]:
    """SMF 113 identification section (smf113.md 5): where a record states its interval, use it, after checking
    it against the CTMs of consecutive records of the same CPU (previous CTM = start, this CTM = end)."""
    rs = out["rec_start"].to_numpy(dtype="datetime64[ns]")
    re_ = out["rec_end"].to_numpy(dtype="datetime64[ns]")
    has = ~np.isnat(rs) & ~np.isnat(re_) & (re_ > rs)
    if not has.any():
        return []
    tol = np.timedelta64(int(STATED_TOLERANCE_S * 1e9), "ns")
    start = out["interval_start"].to_numpy(dtype="datetime64[ns]")
    end = out["time"].to_numpy(dtype="datetime64[ns]")
    off_start = osame & has & ~np.isnat(start) & (np.abs(rs - start) > tol)
    off_end = has & (np.abs(re_ - end) > tol)
    findings = emit(out.loc[off_start | off_end], "warning", "interval-mismatch",
                    "system {system}: the interval stated in the record (identification section) disagrees by more "
                    f"than {STATED_TOLERANCE_S:g} s with the times of consecutive records at {{time}} (CPU {{cpus}})",
                    "the stated interval was used for rates; check for lost or out-of-order records") \
        if (off_start | off_end).any() else []
    out.loc[has, "interval_start"] = rs[has]
    out.loc[has, "interval_end"] = re_[has]
    return findings


def _run_start_changes(df: pd.DataFrame, is_abs: np.ndarray) -> list[Finding]:
    """One info finding per later collection run (run_start) of a system."""
    r = df.loc[df["run_start"].notna(), [*_LPAR, "run_start", "source", "offset", "time"]]
    if not len(r):
        return []
    firsts = r.sort_values("time").drop_duplicates([*_LPAR, "run_start"])
    counts = firsts.groupby(_LPAR, sort=False, observed=True)["run_start"].transform("size")
    later = firsts.loc[counts.to_numpy() > 1].sort_values([*_LPAR, "run_start"])
    later = later.loc[later.duplicated(_LPAR, keep="first")]
    return [make_finding(str(x.source), int(x.offset), "info", "new-run",
                         f"system {x.system}: a new collection run starts at {pd.Timestamp(x.run_start).isoformat()}",
                         "counters restart there; the first record of the run is a baseline only",
                         system=x.system, cec=x.cec, run_start=pd.Timestamp(x.run_start).isoformat())
            for x in later.itertuples(index=False)]


def data_checks(out: pd.DataFrame, df: pd.DataFrame, counters: Sequence[str]) -> tuple[pd.DataFrame, list[Finding]]:
    """Quality bits and findings: lost data, MT per core, odd lengths, CPUs coming and going,
    systems moving between CECs or changing machine."""
    findings: list[Finding] = []
    qb = np.zeros(len(out), dtype=np.int64)
    lost = out["lost"].to_numpy(dtype=bool)
    qb[lost] |= QUALITY_BITS["lost-data"]
    findings += emit(out.loc[lost], "warning", "lost-data",
                     "the hardware lost counter data of system {system} in the interval ending {time} (CPU {cpus})",
                     "the interval is kept but marked and left out of the workload hint")
    mcols = [c for c in counters if c[0] == "M"]
    if mcols:
        mtl = out["mt_lost"].to_numpy(dtype=bool)
        qb[mtl] |= QUALITY_BITS["mt-lost-data"]
        has_mt = (out["sets"].to_numpy() & SET_MT) != 0
        core = out["core"].to_numpy()
        # MT-diagnostic counters are per core: keep one CPU (the lowest id) per core and interval
        cand = out.loc[has_mt & (core >= 0), ["cec", "system", "core", "time", "cpu"]]
        extra = cand.sort_values("cpu").duplicated(["cec", "system", "core", "time"], keep="first")
        kill = np.zeros(len(out), dtype=bool)
        kill[extra.index[extra.to_numpy()]] = True
        kill |= mtl
        if kill.any():
            out.loc[kill, mcols] = np.nan
        findings += emit(out.loc[mtl], "warning", "mt-lost-data",
                         "MT-diagnostic counter data of system {system} was lost in the interval ending {time}",
                         "thread density and core-active metrics of the interval are not shown")
    s = out["interval_s"].to_numpy(dtype=np.float64)
    med = out.groupby(_LPAR, sort=False, observed=True)["interval_s"].transform("median").to_numpy(dtype=np.float64)
    odd = np.isfinite(s) & np.isfinite(med) & (np.abs(s - med) > 0.1 * med)
    qb[odd] |= QUALITY_BITS["odd-length"]
    findings += emit(out.loc[odd], "warning", "odd-length",
                     "an interval of system {system} ending {time} differs by more than 10% from the usual "
                     "length (CPU {cpus})", "busy and rates of that interval are less comparable")
    out["qbits"] = qb
    findings += _cpu_presence(df)
    findings += _system_moves(df)
    return out, findings


def _cpu_presence(samples: pd.DataFrame) -> list[Finding]:
    """Info findings for logical CPUs that appear late or vanish early within a system's data.

    Judged on the records (baselines included), not on the intervals: a counter reset turns one record into a
    new baseline and leaves a gap in the intervals, but the CPU did not go away (the reset is its own finding).
    """
    if not len(samples):
        return []
    r = samples[["source", "offset", "system", "class", "cpu", "time", "cec", "lpar"]]
    span = r.groupby(_LPAR, sort=False, observed=True)["time"].agg(["min", "max"])
    per = r.sort_values("time").groupby([*_LPAR, "class", "cpu"], sort=False, observed=True)
    firsts, lasts = per.head(1), per.tail(1)
    f = firsts.join(span, on=_LPAR)
    l_ = lasts.join(span, on=_LPAR)
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


def _system_moves(df: pd.DataFrame) -> list[Finding]:
    """A system seen on two CECs (moved LPAR, new machine) or changing versions on one CEC.

    A system that leaves one CEC and later runs on another is the usual before/after
    of a machine upgrade: an info finding.  The same system id on two CECs at the
    same time means two LPARs share an SMF id: a warning, their numbers stay apart.
    """
    res = []
    r = df[["source", "offset", "system", "cec", "lpar", "machine_type", "cfvn", "csvn", "time"]].sort_values("time")
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
    vers = r.drop_duplicates([*_LPAR, "machine_type", "cfvn", "csvn"])
    for (_cec, _lpar, system), g in vers.groupby(_LPAR, sort=False, observed=True):
        if len(g) > 1:
            x, p = g.iloc[1], g.iloc[0]
            res.append(make_finding(str(x["source"]), int(x["offset"]), "warning", "machine-change",
                                    f"system {system} changes from machine type {p['machine_type']} "
                                    f"(CFVN {p['cfvn']}, CSVN {p['csvn']}) to {x['machine_type']} (CFVN {x['cfvn']}, "
                                    f"CSVN {x['csvn']}) at {pd.Timestamp(x['time']).isoformat()}",
                                    "formulas differ before and after; never average across the change",
                                    system=system))
    return res


# -- app/engine/catalog.py helpers as they were (frozen) --

def assign_generations(out: pd.DataFrame, sets: dict[str, FormulaSet],
                       quality_bits: dict[str, int]) -> tuple[pd.DataFrame, list[Finding]]:
    """Set ``generation`` and ``formula_set`` per row (machine type first, CSVN as cross-check);
    findings for CSVN mismatches, unknown machine types and rows left with generic formulas."""
    findings: list[Finding] = []
    combo = out.groupby(["machine_type", "csvn"], sort=False, dropna=False, observed=True).ngroup().to_numpy()
    gen = np.empty(len(out), dtype=object)
    fset = np.empty(len(out), dtype=object)
    qb = out["qbits"].to_numpy().copy()
    for cid in np.unique(combo):
        idx = np.flatnonzero(combo == cid)
        row = out.iloc[idx[0]]
        mt, csvn = str(row["machine_type"]), int(row["csvn"])
        g, how = select_generation(sets, mt, csvn)
        gen[idx] = g
        fset[idx] = sets[g].version
        sub = out.iloc[idx]
        firsts = sub.drop_duplicates(_LPAR)
        if how == "csvn-mismatch":
            qb[idx] |= quality_bits["csvn-mismatch"]
            for x in firsts.itertuples(index=False):
                findings.append(make_finding(
                    str(x.source), int(x.offset), "warning", "csvn-mismatch",
                    f"system {x.system}: machine type {mt} is {g} (CSVN {sets[g].csvn}) but the records "
                    f"carry CSVN {csvn}", f"the {g} formulas are used; check the extended-counter metrics",
                    system=x.system, machine_type=mt, csvn=csvn))
        elif how == "by-csvn":
            qb[idx] |= quality_bits["generation-by-csvn"]
            for x in firsts.itertuples(index=False):
                findings.append(make_finding(
                    str(x.source), int(x.offset), "warning", "unknown-machine-type",
                    f"system {x.system}: machine type {mt!r} is not known; CSVN {csvn} points to {g}",
                    f"the {g} formulas are used", system=x.system, machine_type=mt, csvn=csvn))
        elif how == "generic" or g == GENERIC:
            qb[idx] |= quality_bits["generic-formulas"]
            for x in firsts.itertuples(index=False):
                findings.append(make_finding(
                    str(x.source), int(x.offset), "warning", "no-formula-set",
                    f"system {x.system}: neither machine type {mt!r} nor CSVN {csvn} identifies a generation",
                    "only generation-independent metrics (CPI, L1MP, PRBSTATE, LPARCPU, Eff GHz, MIPS) are shown",
                    system=x.system, machine_type=mt, csvn=csvn))
    out["generation"] = gen
    out["formula_set"] = fset
    out["qbits"] = qb
    return out, findings


def cut_uninstalled(out: pd.DataFrame, counters: Sequence[str]) -> None:
    """NaN counters beyond the set sizes implied by the row's CFVN/CSVN (metrics.md 1.1)."""
    if not len(out) or not counters:
        return
    vers = out.groupby(["cfvn", "csvn"], sort=False).ngroup().to_numpy()
    for v in np.unique(vers):
        idx = np.flatnonzero(vers == v)
        cfvn, csvn = int(out["cfvn"].iloc[idx[0]]), int(out["csvn"].iloc[idx[0]])
        cut = []
        for c in counters:
            bit = BIT_OF_LETTER[c[0]]
            governing = cfvn if bit in (SET_BASIC, SET_PROBLEM) else csvn
            if governing > 0 and int(c[1:]) >= BASE_OF_BIT[bit] + set_size(bit, cfvn, csvn):
                cut.append(out.columns.get_loc(c))
        if cut:                    # one assignment per version pair, not one per counter
            out.iloc[idx, cut] = np.nan
