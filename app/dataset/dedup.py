"""Counted once: a sample, an interval and a partition row are in a dataset once, whatever files brought them.

Identity, not the file, decides (issue 24):

* a **sample** is (cec, lpar, system, class, cpu, kind, time): a sample the dataset holds already (the same data
  in a gunzipped copy, in a dump with other record types around it, in the overlap of two dumps) is not added;
* an **interval** is (cec, lpar, system, class, cpu, end); its deltas are computed by the engine
  (:func:`app.engine.deltas.compute_intervals`, the code behind ``report``) over the file's new samples *and*
  the dataset's samples of the same CPUs from the last one before the file's first new sample to the first one
  after its last (running totals are split into runs by the engine, as ``report`` does).  So a file extracted
  before an earlier one gets its first interval when the earlier one arrives, and a file that fills a gap
  (running totals extracted p2, p0, p1) replaces the interval that spanned the gap: a stored interval whose
  end is computed again with another start is superseded, its part file rewritten without it
  (:func:`app.dataset.compact.rewrite`, a compaction record: manifest entries stay as they were);
* a **partition row** (z/VM D0R16) is (cec, lpar, class, time).

The result is what ``report`` gives over the same files read together, whatever their order or overlap
(tests/dataset/test_dataset_dedup.py, a property test).  Two extracts at the same moment take turns: each
holds the dataset lock (:mod:`app.dataset.lock`) from its first look-up here to its commit, so of overlapping
data only the first adds the overlap.  A file added in chunks (:mod:`app.dataset.adder`) is looked up chunk by
chunk, its earlier chunks' parts seen as the dataset's (or, in time order, their last samples as context).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from app.dataset import tables
from app.dataset.sql import lit_str

__all__ = ["SAMPLE_KEY", "INTERVAL_KEY", "new_rows", "context_samples", "stored_intervals", "settle", "first_times",
           "settle_rows", "CONTEXT_SOURCE", "with_tail", "in_order", "tail_of"]

SAMPLE_KEY = ["cec", "lpar", "system", "class", "cpu", "kind"]          # + time
INTERVAL_KEY = ["cec", "lpar", "system", "class", "cpu"]                # + t_end
PARTITION_KEY = ["cec", "lpar", "class"]                                # + time
CONTEXT_SOURCE = "\x00dataset-context:"
_PAD = pd.Timedelta(days=62)      # how far before/after a file the neighbouring samples are looked for


def _con():
    import duckdb

    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    return con


def _months(lo: pd.Timestamp, hi: pd.Timestamp) -> set[str]:
    return {p.strftime("%Y-%m") for p in pd.period_range(lo.to_period("M"), hi.to_period("M"), freq="M")}


def _files_sql(files: Sequence[str]) -> str:
    return "[" + ", ".join(lit_str(f) for f in files) + "]"


def _text(s: pd.Series) -> np.ndarray:
    """``s.astype(str)`` as an object array; a categorical column converts each category once, not each row."""
    if isinstance(s.dtype, pd.CategoricalDtype) and (pd.api.types.is_string_dtype(s.cat.categories.dtype)
                                                     or s.cat.categories.dtype == object):
        codes = s.cat.codes.to_numpy()
        cats = np.append(s.cat.categories.astype(str).to_numpy(dtype=object), np.nan)   # code -1: NaN, as astype
        return cats[codes]
    return s.astype(str).to_numpy()


def _key_frame(df: pd.DataFrame, key: list[str], tcol: str) -> pd.DataFrame:
    out = pd.DataFrame({c: (df[c].astype(np.int64).to_numpy() if c == "cpu" else _text(df[c])) for c in key})
    out["t"] = tables.ns_of(df[tcol])
    return out


def _distinct_text(s: pd.Series) -> set:
    """The distinct values of ``_text(s)`` (a categorical's used categories: no per-row strings)."""
    if isinstance(s.dtype, pd.CategoricalDtype):
        codes = np.unique(s.cat.codes.to_numpy())
        cats = np.append(s.cat.categories.astype(str).to_numpy(dtype=object), np.nan)
        return set(cats[codes])
    return set(pd.unique(_text(s)))


def _parts_around(ds, table: str, frame: pd.DataFrame, tcol: str, pad: pd.Timedelta | None = None) -> list[str]:
    """The part files of ``table`` of the CECs of ``frame`` in the months of its times (widened by ``pad``):
    where its rows' identities may be stored.  Nothing is looked up when there are none."""
    t = tables.ns_of(frame[tcol])
    tmin, tmax = pd.Timestamp(int(t.min())), pd.Timestamp(int(t.max()))
    if pad is not None:
        tmin, tmax = tmin - pad, tmax + pad
    return ds.parts(table, cecs=_distinct_text(frame["cec"]), months=_months(tmin, tmax))


def _is_context(source: pd.Series) -> np.ndarray:
    """Rows whose ``source`` names a context sample (:data:`CONTEXT_SOURCE`), tested once per category."""
    if isinstance(source.dtype, pd.CategoricalDtype):
        cats = source.cat.categories.astype(str).to_numpy(dtype=object)
        hit = np.append(np.array([c.startswith(CONTEXT_SOURCE) for c in cats], dtype=bool), False)
        return hit[source.cat.codes.to_numpy()]
    return source.astype(str).str.startswith(CONTEXT_SOURCE).to_numpy(dtype=bool)


def _tuples(df: pd.DataFrame, key: list[str], tcol: str | None) -> tuple[list[tuple], list[int]]:
    """Per row of a small frame (a row a CPU) its key as a tuple of :func:`_key_frame`'s values (a missing
    name None) and its time (int64 ns): compared in Python, no frame made."""
    cols = []
    for c in key:
        v = df[c].astype(np.int64).tolist() if c == "cpu" else _text(df[c]).tolist()
        cols.append([None if isinstance(x, float) and x != x else x for x in v])
    return list(zip(*cols)), (tables.ns_of(df[tcol]).tolist() if tcol is not None else [])


_NUMERIC_KEYS = ("cpu", "t", "t0")
_SMALL = 20_000             # rows of both sides from which _isin hashes through pandas instead of Python tuples


def _isin(a: pd.DataFrame, b: pd.DataFrame, cols: list[str]) -> np.ndarray:
    """Per row of ``a``: whether a row of ``b`` has its values in ``cols`` (names compared as text, ``cpu``,
    ``t`` and ``t0`` as int64)."""
    if not len(a) or not len(b):
        return np.zeros(len(a), dtype=bool)
    if len(a) + len(b) <= _SMALL:       # a few CPUs' rows (the usual look-up): Python's set, not a MultiIndex
        ka, kb = _plain_rows(a, cols), _plain_rows(b, cols)
        if ka is not None and kb is not None:
            have = set(kb)
            return np.fromiter((r in have for r in ka), bool, len(ka))
    ka = pd.MultiIndex.from_frame(a[cols].astype({c: (np.int64 if c in _NUMERIC_KEYS else str) for c in cols}))
    kb = pd.MultiIndex.from_frame(b[cols].astype({c: (np.int64 if c in _NUMERIC_KEYS else str) for c in cols}))
    return ka.isin(kb)


def _plain_rows(df: pd.DataFrame, cols: list[str]) -> list[tuple] | None:
    """The rows of ``df``'s ``cols`` as tuples of Python str and int, equal where :func:`_isin`'s MultiIndex
    would find them equal; None when a name column holds anything but str (a missing value: pandas decides)."""
    out = []
    for c in cols:
        if c in _NUMERIC_KEYS:
            out.append(df[c].astype(np.int64).tolist())
            continue
        v = df[c].tolist()
        if not all(type(x) is str for x in v):
            return None
        out.append(v)
    return list(zip(*out))


def new_rows(ds, table: str, frame: pd.DataFrame | None,
             held: list[pd.DataFrame] | None = None) -> tuple[pd.DataFrame | None, int]:
    """The rows of ``frame`` (samples or partitions) the dataset does not hold yet, and how many it held;
    ``held`` (a list) gets the key columns and time (``t``, ns) of the rows it held."""
    if frame is None or not len(frame):
        return frame, 0
    key = SAMPLE_KEY if table == "samples" else PARTITION_KEY
    files = _parts_around(ds, table, frame, "time")
    if not files:
        return frame, 0
    k = _key_frame(frame, key, "time")
    con = _con()
    try:
        con.register("k", k.drop_duplicates())
        cols = ", ".join(f"s.{c}" for c in key)
        on = " AND ".join(f"s.{c} = k.{c}" for c in key)
        have = con.execute(f"SELECT DISTINCT {cols}, epoch_ns(s.time) AS t FROM {tables.duckdb_source(_files_sql(files))} s "
                           f"JOIN k ON {on} AND epoch_ns(s.time) = k.t").df()
    finally:
        con.close()
    dup = _isin(k, have, key + ["t"])
    if not dup.any():
        return frame, 0
    if held is not None:
        held.append(k.loc[dup].reset_index(drop=True))
    return frame.loc[~dup].reset_index(drop=True), int(dup.sum())


def context_samples(ds, samples: pd.DataFrame) -> pd.DataFrame | None:
    """The dataset's samples of the CPUs of ``samples`` from the last one before each CPU's first sample of
    ``samples`` to the first one after its last (both included), as engine samples whose ``source`` is
    ``CONTEXT_SOURCE + <their file's sha256>`` (``_orig_source`` keeps the file name)."""
    if not len(samples):
        return None
    files = _parts_around(ds, "samples", samples, "time", _PAD)
    if not files:
        return None
    k = _key_frame(samples, SAMPLE_KEY, "time")
    rng = k.groupby(SAMPLE_KEY, sort=False)["t"].agg(["min", "max"]).reset_index()
    on = " AND ".join(f"s.{c} = r.{c}" for c in SAMPLE_KEY)
    keys = ", ".join(SAMPLE_KEY)
    con = _con()
    try:
        con.register("r", rng)
        # 1. per CPU the neighbours' times (key columns and time only: cheap), 2. the samples between them,
        # from the months they span only
        b = con.execute(
            f"WITH s AS (SELECT {keys}, epoch_ns(time) AS _t FROM {tables.duckdb_source(_files_sql(files))}) "
            f", g AS (SELECT r.*, max(CASE WHEN s._t < r.min THEN s._t END) AS lo0, "
            f"min(CASE WHEN s._t > r.max THEN s._t END) AS hi0 FROM r JOIN s ON {on} GROUP BY ALL) "
            "SELECT * EXCLUDE (lo0, hi0), coalesce(lo0, min) AS lo, coalesce(hi0, max) AS hi FROM g").df()
        if not len(b):
            return None
        files = ds.parts("samples", cecs=set(b["cec"].astype(str).unique()),
                         months=_months(pd.Timestamp(int(b["lo"].min())), pd.Timestamp(int(b["hi"].max()))))
        con.register("b", b)
        ctx = con.execute(
            f"SELECT s.* FROM {tables.duckdb_source(_files_sql(files))} s JOIN b r ON {on} "
            "WHERE epoch_ns(s.time) >= r.lo AND epoch_ns(s.time) <= r.hi").df()
    finally:
        con.close()
    if not len(ctx):
        return None
    tables.to_engine_samples(ctx)
    ctx["_orig_source"] = ctx["source"].astype(str)
    ctx["source"] = CONTEXT_SOURCE + ctx["sha256"].astype(str)
    for c in ctx.columns:
        if tables.is_counter(c):
            ctx[c] = ctx[c].fillna(0).astype(np.uint64)
    return ctx


def stored_intervals(ds, iv: pd.DataFrame) -> pd.DataFrame:
    """The dataset's intervals with the identity (cec, lpar, system, class, cpu, end) of a row of ``iv``: the
    key columns, ``t`` (end) and ``t0`` (start) in int64 ns, and ``_file`` (the part file holding it)."""
    cols = INTERVAL_KEY + ["t", "t0", "_file"]
    if not len(iv):
        return pd.DataFrame(columns=cols)
    files = _parts_around(ds, "intervals", iv, "interval_end")
    if not files:
        return pd.DataFrame(columns=cols)
    k = _key_frame(iv, INTERVAL_KEY, "interval_end")
    on = " AND ".join(f"s.{c} = k.{c}" for c in INTERVAL_KEY)
    src = tables.duckdb_source(_files_sql(files)).replace("union_by_name=true", "union_by_name=true, filename=true")
    con = _con()
    try:
        con.register("k", k.drop_duplicates())
        out = con.execute(f"SELECT {', '.join('s.' + c for c in INTERVAL_KEY)}, epoch_ns(s.t_end) AS t, "
                          f"epoch_ns(s.t_start) AS t0, s.filename AS _file FROM {src} s "
                          f"JOIN k ON {on} AND epoch_ns(s.t_end) = k.t").df()
    finally:
        con.close()
    return out[cols]


def settle(ds, iv: pd.DataFrame, frames: Sequence[pd.DataFrame], held: pd.DataFrame | None = None
           ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`settle_rows`, the rows to add taken out of ``iv`` (a copy of them: the extract takes
    :func:`settle_rows`' mask instead and writes the rows from ``iv`` itself, a row group at a time)."""
    add, drop = settle_rows(ds, iv, frames, held)
    return (iv if add.all() else iv.loc[add].reset_index(drop=True)), drop


def settle_rows(ds, iv: pd.DataFrame, frames: Sequence[pd.DataFrame], held: pd.DataFrame | None = None,
                last_firsts: dict[tuple, int] | None = None) -> tuple[np.ndarray, pd.DataFrame]:
    """Which computed intervals to add, and which stored ones they supersede.

    ``iv``: the engine's intervals over the file's new samples and their context, computed from the sample
    frames ``frames`` (:func:`first_times`: per CPU the time of its first sample in them).  A row is added
    when the dataset has no interval of its identity, or has one with another start (that one is superseded);
    a row of the file's own samples or of a context sample (an interval of another file computed again).  A
    context row ending at the first sample of its CPU is left alone: its true start was not read.
    ``held``: stored rows (as :func:`stored_intervals` gives them) the dataset's parts do not list to this
    look-up (the file's earlier chunks' intervals that end at a context sample after them).
    ``last_firsts``: :func:`_first_time_of` of the last frame, made already (:func:`first_times_of`: the
    chunk's samples, grouped by CPU once for this and the chunk's other look-ups).
    Returns (a mask of the rows of ``iv`` to add, stored rows to remove: key, t, t0, _file).
    """
    st = stored_intervals(ds, iv)
    if held is not None and len(held):
        st = held if not len(st) else pd.concat([st, held], ignore_index=True)
    add = np.ones(len(iv), dtype=bool)
    if not len(iv):
        return add, st
    ctx = _is_context(iv["source"])
    if ctx.any():           # a context row ending at its CPU's first sample: not added
        firsts = _first_time_of(frames if last_firsts is None else frames[:-1])
        if firsts is not None and last_firsts is not None:
            for k, t in last_firsts.items():
                if k not in firsts or t < firsts[k]:
                    firsts[k] = t
        if firsts is not None:       # a row a CPU, compared in Python (no key frames, no groupby)
            keys, ts = _tuples(iv.loc[ctx, INTERVAL_KEY + ["interval_end"]], INTERVAL_KEY, "interval_end")
            add[ctx] = [firsts.get(k) != t for k, t in zip(keys, ts)]
        else:
            kc = _key_frame(iv.loc[ctx, INTERVAL_KEY + ["interval_end"]], INTERVAL_KEY, "interval_end")
            add[ctx] = ~_isin(kc, first_times(frames), INTERVAL_KEY + ["t"])
    if not len(st):         # nothing stored with these identities (a new dataset, a later chunk in time order)
        return add, st.reset_index(drop=True)
    k = _key_frame(iv, INTERVAL_KEY, "interval_end")
    k["t0"] = tables.ns_of(iv["interval_start"])
    # a stored interval of the same identity and start is the same interval, unless it is a context row whose
    # sample before is one of the file's new ones: then it was stored measured from another sample, though its
    # start may read the same (an interval the record states: running totals across a gap a file now fills)
    renewed = _after_new(iv, ctx & add, frames)
    add &= ~_isin(k, st, INTERVAL_KEY + ["t", "t0"]) | renewed
    # stored rows to drop: the identity of an added row (with another start, or renewed)
    drop = st.loc[_isin(st, k.loc[add], INTERVAL_KEY + ["t"])]
    return add, drop.reset_index(drop=True)


def _after_new(iv: pd.DataFrame, rows: np.ndarray, frames: Sequence[pd.DataFrame]) -> np.ndarray:
    """Per row of ``iv``: one of ``rows`` (context rows) whose CPU's sample before it, over ``frames`` (the
    context samples, then last the file's new samples), is one of the new ones."""
    out = np.zeros(len(iv), dtype=bool)
    frames = [f for f in frames if f is not None and len(f)]
    if not rows.any() or len(frames) < 2:
        return out
    new, old = _times_per_cpu(frames[-1:]), _times_per_cpu(frames[:-1])
    idx = np.flatnonzero(rows)
    keys, ts = _tuples(iv.iloc[idx][INTERVAL_KEY + ["interval_end"]], INTERVAL_KEY, "interval_end")
    for i, key, t in zip(idx, keys, ts):
        tn = new.get(key)
        if tn is None:
            continue
        j = int(np.searchsorted(tn, t)) - 1             # the latest new sample before the row's end
        if j < 0:
            continue
        to = old.get(key)
        jo = -1 if to is None else int(np.searchsorted(to, t)) - 1
        out[i] = jo < 0 or tn[j] > to[jo]
    return out


def _times_per_cpu(frames: Sequence[pd.DataFrame]) -> dict[tuple, np.ndarray]:
    """Per CPU (:data:`INTERVAL_KEY`, a key tuple as :func:`_tuples` makes it) the sorted sample times (int64
    ns) of ``frames``: grouped by the columns' category codes, a key tuple made per CPU, not per row."""
    out: dict[tuple, list[np.ndarray]] = {}
    for f in frames:
        t = tables.ns_of(f["time"])
        inv, first = _cpu_groups(f, INTERVAL_KEY)
        keys, _ = _tuples(f[INTERVAL_KEY].iloc[first], INTERVAL_KEY, None)
        order = np.argsort(inv, kind="stable")
        bounds = np.searchsorted(inv[order], np.arange(len(first) + 1))
        for g, key in enumerate(keys):
            out.setdefault(key, []).append(t[order[bounds[g]:bounds[g + 1]]])
    return {key: np.sort(np.concatenate(v)) for key, v in out.items()}


def _cpu_groups(frame: pd.DataFrame, key: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Per row its group of ``key`` (a missing value is a value of its own, as ``groupby(dropna=False)``), and
    per group its first row: from the columns' category codes (strings factorized once), no key text."""
    gid = np.zeros(len(frame), np.int64)
    for c in key:
        s = frame[c]
        if isinstance(s.dtype, pd.CategoricalDtype):
            codes, n = s.cat.codes.to_numpy().astype(np.int64) + 1, len(s.cat.categories) + 1
        else:
            codes, uniq = pd.factorize(s.to_numpy(), use_na_sentinel=True)
            codes, n = codes.astype(np.int64) + 1, len(uniq) + 1
        if int(gid.max(initial=0)) >= (1 << 62) // n:      # dense again before the product could overflow
            gid = np.unique(gid, return_inverse=True)[1].reshape(-1).astype(np.int64)
        gid = gid * n + codes
    _, first, inv = np.unique(gid, return_index=True, return_inverse=True)
    return inv.reshape(-1), first


def _cpu_extremes(frame: pd.DataFrame, key: Sequence[str], latest: bool,
                  groups: tuple | None = None) -> tuple[np.ndarray, np.ndarray] | None:
    """Per CPU of ``frame`` (``key``) the row of its first (``latest``: last; the first such row of equal times)
    sample and that time (int64 ns), groups in order of their first row; None when a time is missing (the
    caller's pandas way then).  ``groups``: (times, :func:`_cpu_groups`) of ``frame`` and ``key`` made already
    (:class:`CpuEnds`)."""
    if groups is None:
        t = tables.ns_of(frame["time"])
        if not len(t) or (t == np.iinfo(np.int64).min).any():
            return None
        inv, first = _cpu_groups(frame, key)
    else:
        t, (inv, first) = groups
    k = len(first)
    best = np.full(k, np.iinfo(np.int64).min if latest else np.iinfo(np.int64).max, np.int64)
    (np.maximum if latest else np.minimum).at(best, inv, t)
    hit = np.flatnonzero(t == best[inv])
    _, at = np.unique(inv[hit], return_index=True)
    rows = hit[at]                       # per group (in group id order) its first row at that time
    order = np.argsort(first, kind="stable")
    return rows[order], best[order]


class CpuEnds:
    """Per CPU (:data:`SAMPLE_KEY`) of a chunk's samples its first and its last sample (:func:`_cpu_extremes`),
    the rows grouped once for both (:func:`in_order` asks for the first, :func:`tail_of` for the last), and
    only when asked."""

    def __init__(self, frame: pd.DataFrame) -> None:
        self.frame = frame
        self._groups = None
        self._got: dict[bool, tuple | None] = {}

    def get(self, latest: bool) -> tuple[np.ndarray, np.ndarray] | None:
        if latest not in self._got:
            if self._groups is None:
                t = tables.ns_of(self.frame["time"])
                self._groups = False if not len(t) or (t == np.iinfo(np.int64).min).any() else (
                    t, _cpu_groups(self.frame, SAMPLE_KEY))
            self._got[latest] = None if self._groups is False else _cpu_extremes(
                self.frame, SAMPLE_KEY, latest, self._groups)
        return self._got[latest]


def first_times(frames: Sequence[pd.DataFrame]) -> pd.DataFrame:
    """Per CPU (:data:`INTERVAL_KEY`) the time of its first sample over ``frames`` (int64 ns, column ``t``)."""
    firsts = []
    for f in frames:            # a row a CPU of each frame, then its strings
        if f is None or not len(f):
            continue
        got = _cpu_extremes(f, INTERVAL_KEY, latest=False)
        if got is None:
            firsts.append(_key_frame(f, INTERVAL_KEY, "time"))
            continue
        k = _key_frame(f[INTERVAL_KEY + ["time"]].iloc[got[0]], INTERVAL_KEY, "time")    # its key columns only
        k["t"] = got[1]
        firsts.append(k)
    k = pd.concat(firsts, ignore_index=True)
    return k.groupby(INTERVAL_KEY, sort=False)["t"].min().reset_index()


def first_times_of(ends: CpuEnds) -> dict[tuple, int] | None:
    """:func:`_first_time_of` of the frame of ``ends`` (its first sample of each CPU and kind, made once for the
    chunk: the earliest of them a CPU of :data:`INTERVAL_KEY`); None when it has a missing time."""
    got = ends.get(latest=False)
    if got is None:
        return None
    out: dict[tuple, int] = {}
    keys, _ = _tuples(ends.frame[INTERVAL_KEY].iloc[got[0]], INTERVAL_KEY, None)
    for k, t in zip(keys, got[1].tolist()):
        if None not in k and (k not in out or t < out[k]):
            out[k] = t
    return out


def _first_time_of(frames: Sequence[pd.DataFrame]) -> dict[tuple, int] | None:
    """:func:`first_times` as a dict (key tuple as :func:`_tuples` makes it -> int64 ns), made from a row a CPU
    of each frame; a key with a missing name is left out (as the groupby of :func:`first_times` leaves it out).
    None when a frame has a missing time (the caller then takes :func:`first_times`)."""
    out: dict[tuple, int] = {}
    for f in frames:
        if f is None or not len(f):
            continue
        got = _cpu_extremes(f, INTERVAL_KEY, latest=False)
        if got is None:
            return None
        keys, _ = _tuples(f[INTERVAL_KEY].iloc[got[0]], INTERVAL_KEY, None)
        for k, t in zip(keys, got[1].tolist()):
            if None not in k and (k not in out or t < out[k]):
                out[k] = t
    return out


# -- a file added in chunks (app/dataset/adder.py) --------------------------------------------------------------
def in_order(tail: pd.DataFrame | None, samples: pd.DataFrame, ends: CpuEnds | None = None) -> bool:
    """True when every CPU (:data:`SAMPLE_KEY`) of ``samples`` has no sample in ``tail`` (the last sample of each
    CPU of the file's earlier chunks) at or after its first one here: the earlier chunks then hold no sample
    of ``samples`` and no interval they compute, and their only context is ``tail``.  ``ends``: the
    :class:`CpuEnds` of ``samples`` (made here when not given)."""
    if tail is None or not len(tail) or not len(samples):
        return True
    got = (ends if ends is not None and ends.frame is samples else CpuEnds(samples)).get(latest=False)
    if got is None:
        first = samples.groupby(SAMPLE_KEY, observed=True, sort=False, dropna=False)["time"].min().reset_index()
        keys, ts = _tuples(first, SAMPLE_KEY, "time")
    else:                       # a row a CPU
        keys, ts = _tuples(samples[SAMPLE_KEY + ["time"]].iloc[got[0]], SAMPLE_KEY, "time")[0], got[1].tolist()
    last = dict(zip(*_tuples(tail, SAMPLE_KEY, "time")))
    return all(t > last[c] for c, t in zip(keys, ts) if c in last)


def tail_of(tail: pd.DataFrame | None, samples: pd.DataFrame, sha: str,
            ends: CpuEnds | None = None) -> pd.DataFrame | None:
    """The last sample of each CPU over ``tail`` and ``samples`` (the file's new samples of a chunk), as context
    samples of the file ``sha`` (``source`` = ``CONTEXT_SOURCE + sha``, ``_orig_source`` its name).  ``ends``:
    the :class:`CpuEnds` of ``samples`` when made already.  The rows are chosen on their keys and times first
    (a row a CPU: compared in Python), and only those taken: no frame of both made and cut again."""
    if not len(samples):
        return tail
    plain = isinstance(samples.index, pd.RangeIndex) and samples.index.start == 0 and samples.index.step == 1
    got = None
    if plain:
        got = (ends if ends is not None and ends.frame is samples else CpuEnds(samples)).get(latest=True)
    if got is None:
        last = samples.groupby(SAMPLE_KEY, observed=True, sort=False, dropna=False)["time"].idxmax().to_numpy()
        new = samples.loc[np.sort(last)]
    else:
        new = samples.take(np.sort(got[0]))       # a row a CPU (labels are positions)
    have = tail is not None and len(tail) > 0
    tk, tt = _tuples(tail, SAMPLE_KEY, "time") if have else ([], [])
    nk, nt = _tuples(new[SAMPLE_KEY + ["time"]], SAMPLE_KEY, "time")
    keys, ts = tk + nk, tt + nt
    at: dict[tuple, int] = {}   # per CPU the row of its latest time (of equal times the later row)
    for i, (c, t) in enumerate(zip(keys, ts)):
        j = at.get(c)
        if j is None or t >= ts[j]:
            at[c] = i
    pick = np.sort(np.fromiter(at.values(), np.int64, len(at)))
    m = len(tk)
    from_tail, from_new = pick[pick < m], pick[pick >= m] - m
    if len(from_new) < len(new):
        new = new.iloc[from_new]
    new = new.assign(_orig_source=new["source"].astype(str), source=CONTEXT_SOURCE + sha, sha256=sha)
    if "month" in new.columns:
        new = new.drop(columns=["month"])
    new = new.reset_index(drop=True)
    if not have:
        out = new
    else:
        if list(new.columns) != list(tail.columns):     # (the same columns in the same order: as they are)
            new = new[list(tail.columns)]
        if len(from_tail) or not _same_dtypes(tail, new):
            out = pd.concat([tail.iloc[from_tail], new], ignore_index=True)
        else:                   # every CPU of the tail has a later sample here, of the same types: no concat
            out = new
    for c in ("source", "_orig_source", "sha256"):
        out[c] = out[c].astype(str)
    return out


def _same_dtypes(a: pd.DataFrame, b: pd.DataFrame) -> bool:
    """``a`` and ``b`` (the same columns) have the same dtypes, a categorical's categories in the same order:
    their concatenation keeps ``b``'s."""
    for x, y in zip(a.dtypes, b.dtypes):
        if isinstance(x, pd.CategoricalDtype) or isinstance(y, pd.CategoricalDtype):
            if not (isinstance(x, pd.CategoricalDtype) and isinstance(y, pd.CategoricalDtype)
                    and x.ordered == y.ordered and x.categories.equals(y.categories)
                    and x.categories.dtype == y.categories.dtype):
                return False
        elif x != y:
            return False
    return True


def with_tail(ctx: pd.DataFrame | None, tail: pd.DataFrame | None,
              samples: pd.DataFrame | None = None) -> pd.DataFrame | None:
    """The dataset's context samples ``ctx`` and the file's ``tail``: of a CPU in the tail, only the dataset's
    samples after the tail's time are kept (the earlier ones were the context of the earlier chunks); and the
    tail's sample of a CPU is left out where the dataset holds a sample of that CPU between it and the CPU's
    first sample of ``samples`` (the chunk's new ones): that stored sample, not the tail's, is the one before
    them (a stored piece inside the file's span, whose samples the earlier chunks held too: with the tail's
    sample beside it, the engine measured the stored piece's last interval from the tail)."""
    if tail is None or not len(tail):
        return ctx
    if ctx is None or not len(ctx):
        return tail
    k = _key_frame(ctx, SAMPLE_KEY, "time")
    t = _key_frame(tail, SAMPLE_KEY, "time").rename(columns={"t": "tt"})
    m = k.merge(t, on=SAMPLE_KEY, how="left")
    keep = ~(m["t"].to_numpy() <= m["tt"].fillna(-1).to_numpy())
    use = np.ones(len(tail), dtype=bool)
    if samples is not None and len(samples) and keep.any():
        first = _key_frame(samples, SAMPLE_KEY, "time").groupby(SAMPLE_KEY, sort=False, dropna=False)["t"].min()
        kept = m.loc[keep].merge(first.rename("tf").reset_index(), on=SAMPLE_KEY, how="inner")
        between = kept.loc[(kept["t"] > kept["tt"]) & (kept["t"] < kept["tf"]), SAMPLE_KEY].drop_duplicates()
        if len(between):
            use = ~_isin(t, between, SAMPLE_KEY)
    tail = tail.loc[use] if not use.all() else tail
    out = pd.concat([ctx.loc[keep], tail[[c for c in tail.columns if c in ctx.columns]]], ignore_index=True)
    for c in out.columns:
        if tables.is_counter(c) and out[c].dtype != np.uint64:   # a counter the tail lacks: 0, as a NULL of ctx
            out[c] = out[c].fillna(0).astype(np.uint64)
    return out
