"""Per-CEC time-bucket parameters of a dataset, kept between commands (``DATASET/stats.json``).

The buckets of ``report`` (a system's usual interval length and phase; the CEC's common bucket) depend on all
the data of a CEC's systems, not on the window a query asks for.  Computing them at every query meant a pass over
the whole fleet; they are computed once per CEC (over all the interval parts of that CEC only) and kept with a
signature of the parts they were computed from: the sorted paths of the CEC's parts as the manifest entries list
them (compaction merges parts but does not change that list, so it keeps the cache).  A query recomputes only the
CECs whose signature changed (``extract`` does it for the CECs it wrote to, so a query after it finds them ready).
Only the commands that write the dataset write the file (atomically, best effort); a query over CECs the cache
does not cover computes theirs for itself.

The same commands keep each CEC's data profile per month (``profile``: the machine type, CSVN and generation
pairs its intervals hold and whether any is marked implausible or has lost data), what a query learns before it
writes its statement (:func:`app.dataset.plan.data_profile`): a query over months the cache covers reads it
instead of scanning its parts for it (a cache written before it was kept: the query scans, as before).  Beside
each profile row (``counted``, a list of its own, so that a NestScope from before it reads the profile as before):
its rows and how many hold the first problem-state and extended counter; a counter every row a query reads holds,
or none does, is not counted again by the query's statement (:func:`app.dataset.plan.profile_of`, ``whole``).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from app.dataset.sql import lit_str

# (app.engine.deltas' QUALITY_BITS["odd-length"] and RUN_START_BIT: that module is not imported for two numbers;
# tests/dataset/test_odd_length.py holds them equal)
ODD = 4
RUN_START = 512

__all__ = ["bucket_params", "bucket_params_for", "cached_bucket_params", "cached_profile", "query_stats",
           "refresh_stats", "usual_lengths", "usual_sql", "odd_length_of", "odd_sql", "stored_odd_sql",
           "CACHE_NAME"]

CACHE_NAME = "stats.json"
_NS = 1_000_000_000
_VERSION = 1


def _signature(ds, cec: str) -> str:
    rels = sorted(row[2] for row in ds.index.part_rows("intervals", [cec]))
    return hashlib.sha256("\n".join(rels).encode()).hexdigest()


_LOADED: dict[str, tuple] = {}      # cache file -> (its identity, its CECs as read): read again when it changed


def _load(ds) -> dict[str, Any]:
    """The cache's CECs (a copy of each CEC's entry: the caller may change them); the file is parsed once per
    process while it stays the same file (path, size, modification and change times, inode; one changed within
    :data:`app.dataset.integrity.STAMP_SETTLE_S` is read every time)."""
    from app.dataset.integrity import file_identity, settled

    path = ds.root / CACHE_NAME
    try:
        st = os.stat(path)
        ident = file_identity(st)
        hit = _LOADED.get(str(path))
        if hit is not None and hit[0] == ident:
            return {c: dict(e) if isinstance(e, dict) else e for c, e in hit[1].items()}
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(doc, dict) or doc.get("version") != _VERSION or not isinstance(doc.get("cecs"), dict):
        return {}
    if settled(st):     # (not one written a moment ago: coarse file times)
        if len(_LOADED) >= 8:
            _LOADED.clear()
        _LOADED[str(path)] = (ident, doc["cecs"])
    return {c: dict(e) if isinstance(e, dict) else e for c, e in doc["cecs"].items()}


def bucket_params_for(ds, cecs: Iterable[str], compute: Callable[[list[str]], list[tuple]],
                      save: bool = False, profile: Callable[[list[str]], list[tuple]] | None = None,
                      cache: dict | None = None, sigs: dict[str, str] | None = None,
                      usual: Callable[[list[str]], list[tuple]] | None = None) -> list[tuple]:
    """(cec, system, L, off, cec L, cec off) of every system of ``cecs``: from the cache where its signature
    matches, else ``compute(stale cecs)`` (which reads all the parts of those CECs); with ``save`` (extract,
    compact: the commands that write) the cache is updated.  A query never writes into the dataset.
    ``profile(cecs)``: (cec, month, machine type, CSVN, generation, implausible, lost) rows of the CECs whose
    cached profile is stale or missing, kept with them (:func:`cached_profile`).  ``cache``, ``sigs``: the cache
    as :func:`_load` read it and the CECs' signatures, when the caller has them (:func:`query_stats`).
    ``usual(cecs)``: (cec, lpar, system, usual length, rows marked otherwise) rows (:func:`usual_lengths`) of the
    CECs whose cached ones are stale or missing, kept with them (``usual``; read back by :func:`odd_length_of`)."""
    want = sorted(set(cecs))
    cache = _load(ds) if cache is None else cache
    sigs = sigs if sigs is not None else {c: _signature(ds, c) for c in want}
    stale = [c for c in want if not isinstance(cache.get(c), dict) or cache[c].get("sig") != sigs[c]]
    if stale:
        fresh = compute(stale)
        for c in stale:
            cache[c] = {"sig": sigs[c], "params": [list(p) for p in fresh if p[0] == c]}
    lacking = [c for c in want if profile is not None and (not isinstance(cache[c].get("profile"), list) or
                                                            not isinstance(cache[c].get("counted"), list))]
    if lacking:
        rows = profile(lacking)
        for c in lacking:   # (the counts beside the profile, a row each: a NestScope before them reads the profile)
            cache[c]["profile"] = [[str(r[1]), r[2], r[3], r[4], bool(r[5]), bool(r[6])] for r in rows if r[0] == c]
            cache[c]["counted"] = [r[7] if len(r) > 7 else {} for r in rows if r[0] == c]
    unusual = [c for c in want if usual is not None and not isinstance(cache[c].get("usual"), list)]
    if unusual:
        rows = usual(unusual)
        for c in unusual:
            cache[c]["usual"] = [[r[1], r[2], r[3], int(r[4])] for r in rows if r[0] == c]
    if (stale or lacking or unusual) and save:
        try:
            ds._atomic_write(ds.root / CACHE_NAME,
                             json.dumps({"version": _VERSION, "cecs": cache}).encode())
        except OSError:
            pass
    out = []
    for c in want:
        for p in cache[c]["params"]:
            out.append(tuple(None if v is None else (str(v) if k < 2 else int(v)) for k, v in enumerate(p)))
    return out


def cached_bucket_params(ds, eng, cecs: Iterable[str], save: bool = False, profile: bool = False,
                         cache: dict | None = None, sigs: dict[str, str] | None = None) -> list[tuple]:
    """:func:`bucket_params` of the systems of ``cecs``, from the dataset's cache or computed over all the parts
    of the CECs whose parts changed (:mod:`app.dataset.stats`; ``save``: update the cache; ``profile``: keep
    the CECs' data profiles too, in the same pass)."""
    viewed: list[list[str]] = []

    def over(cs: list[str]) -> bool:
        files = ds.parts("intervals", cecs=cs)
        if files and viewed[-1:] != [cs]:
            eng.view("iv_cec", files)
            viewed.append(cs)
        return bool(files)

    def compute(stale: list[str]) -> list[tuple]:
        return bucket_params(eng, "iv_cec") if over(stale) else []

    def prof(cs: list[str]) -> list[tuple]:
        if not over(cs):
            return []
        import duckdb

        q = eng.dialect.q
        # the rows, and the rows holding the first problem-state and extended counter (the query's quality
        # counts, app.dataset.query.build_sql: a counter every row or no row holds needs no count)
        firsts = [c for c in (next((c for c in ds.counters() if c[0] == x), None) for x in "PE") if c]
        sql = (f"SELECT {q('cec')} AS cec, {q('month')} AS month, machine_type, csvn, generation, "
               "MAX(CASE WHEN qbits % 256 >= 128 THEN 1 ELSE 0 END) AS bad, "
               "MAX(CASE WHEN qbits % 2 = 1 THEN 1 ELSE 0 END) AS lost, COUNT(*) AS n_rows{} FROM iv_cec "
               f"GROUP BY {q('cec')}, {q('month')}, machine_type, csvn, generation")
        try:
            rows = eng.sql(sql.format("".join(f", COUNT({q(c)}) AS {q('n_' + c)}" for c in firsts)))
        except duckdb.Error:        # (a counter no part of these CECs holds)
            firsts, rows = [], eng.sql(sql.format(""))
        def val(v, kind):
            return None if v is None or v != v else kind(v)
        return [(str(r[0]), str(r[1]), val(r[2], str), val(r[3], int), val(r[4], str), int(r[5] or 0) > 0,
                 int(r[6] or 0) > 0, {"rows": int(r[7]), **{c: int(n) for c, n in zip(firsts, r[8:])}})
                for r in rows.itertuples(index=False)]
    def usual(cs: list[str]) -> list[tuple]:
        return usual_lengths(eng, "iv_cec") if over(cs) else []

    return bucket_params_for(ds, cecs, compute, save, prof if profile else None, cache, sigs, usual)


def query_stats(ds, eng, cecs: Iterable[str], months: Iterable[str] | None, profile: bool = True
                ) -> tuple[list[tuple], list[tuple] | None, list[tuple] | None]:
    """(:func:`cached_bucket_params`, :func:`cached_profile` or None without ``profile``, :func:`odd_length_of`)
    of a query: the cache read once and each CEC's signature worked out once for all (each a look-up of the
    CEC's parts)."""
    want = sorted(set(cecs))
    cache = _load(ds)
    sigs = {c: _signature(ds, c) for c in want}
    rows = _profile_from(cache, want, sigs.__getitem__, months) if profile else None    # (before stale CECs' params
    params = cached_bucket_params(ds, eng, want, cache=cache, sigs=sigs)                # replace their entries)
    return params, rows, odd_length_of(cache, want)


def odd_length_of(cache: dict, cecs: Iterable[str]) -> list[tuple] | None:
    """(cec, lpar, system, usual length) of every LPAR of ``cecs`` when the odd-length marks their intervals
    carry are not all the dataset's own (:func:`usual_lengths`: a query marks every row again by these lengths);
    None when every stored mark is."""
    rows = [(c, *r[:3]) for c in cecs for r in cache[c].get("usual") or ()]
    if all(int(r[3]) == 0 for c in cecs for r in cache[c].get("usual") or ()):
        return None
    return rows


def cached_profile(ds, cecs: Iterable[str], months: Iterable[str] | None) -> list[tuple] | None:
    """(machine type, CSVN, generation, implausible, lost[, {"rows": n, counter: rows holding it}]) rows the
    intervals of ``cecs`` in ``months`` (all: None) hold, from the cache; None when the cache does not hold a
    current profile of every one of the CECs (written before profiles were kept, or their parts changed since:
    the query scans its parts instead)."""
    return _profile_from(_load(ds), sorted(set(cecs)), lambda c: _signature(ds, c), months)


def _profile_from(cache: dict, want: list[str], sig: Callable[[str], str], months: Iterable[str] | None
                  ) -> list[tuple] | None:
    """:func:`cached_profile` of the loaded cache, ``sig(cec)`` the CEC's current signature."""
    ms = set(months) if months is not None else None
    out: list[tuple] = []
    for c in want:
        e = cache.get(c)
        if not isinstance(e, dict) or not isinstance(e.get("profile"), list) or e.get("sig") != sig(c):
            return None
        counted = e.get("counted")
        counted = counted if isinstance(counted, list) and len(counted) == len(e["profile"]) else [{}] * len(
            e["profile"])
        out += [(*r[1:], k if isinstance(k, dict) else {}) for r, k in zip(e["profile"], counted)
                if ms is None or r[0] in ms]
    return out


def refresh_stats(ds, cecs: Iterable[str] | None = None) -> None:
    """Bring the cached time-bucket parameters of ``cecs`` (all) up to date (``extract`` and ``compact`` at their
    end), so that queries find them ready."""
    want = sorted(set(cecs) if cecs is not None else ds.cecs())
    if not want or not ds.has_parts("intervals"):
        return
    import duckdb

    from app.dataset.query import DuckDBEngine

    eng = DuckDBEngine([])
    try:
        cached_bucket_params(ds, eng, want, save=True, profile=True)
    except (duckdb.Error, OSError):      # a damaged part met here is named by the query that reads it
        pass
    finally:
        eng.close()


def usual_lengths(eng, src: str = "iv") -> list[tuple[str, Any, Any, float | None, int]]:
    """(cec, lpar, system, usual length in s, rows whose stored odd-length mark differs) of every LPAR of view
    ``src`` (all the parts of its CECs), by report's rule (``app.engine.deltas``): the median length of the
    LPAR's intervals measured between two samples of their CPU (not :data:`~app.engine.deltas.RUN_START_BIT`), else of
    all of them; an interval more than 10 % away from it is odd-length.  The rule is the dataset's, not a
    file's: the extract of a file marks its intervals by the file's own (a file cut into pieces, each holding one
    interval length, marks none), so the rows marked otherwise are counted, and a query over a CEC with any
    marks every row again (:func:`odd_length_of`)."""
    d = eng.dialect
    q = d.q
    key = [q("cec"), q("lpar"), q("system")]
    measured = f"CASE WHEN qbits % {2 * RUN_START} < {RUN_START} THEN interval_s END"
    u = (f"SELECT {', '.join(key)}, COALESCE({d.median(measured)}, {d.median('interval_s')}) AS u "
         f"FROM {src} GROUP BY {', '.join(key)}")
    on = " AND ".join(f"s.{k} IS NOT DISTINCT FROM u.{k}" for k in key)
    rows = eng.sql(f"WITH u AS ({u}) SELECT u.{key[0]} AS cec, u.{key[1]} AS lpar, u.{key[2]} AS sys, "
                   f"MAX(u.u) AS u, SUM(CASE WHEN {stored_odd_sql('s.qbits')} = "
                   f"{odd_sql('s.interval_s', 'u.u')} THEN 0 ELSE 1 END) AS n "
                   f"FROM {src} AS s JOIN u ON {on} GROUP BY u.{key[0]}, u.{key[1]}, u.{key[2]}")

    def name(v):
        return None if v is None or v != v else str(v)
    return [(str(r[0]), name(r[1]), name(r[2]), None if r[3] is None or r[3] != r[3] else float(r[3]),
             int(r[4] or 0)) for r in rows.itertuples(index=False)]


def stored_odd_sql(qbits: str) -> str:
    """The odd-length bit (4 or 0) ``qbits`` carries (the mark its file's extract made)."""
    return f"CASE WHEN {qbits} % {2 * ODD} >= {ODD} THEN {ODD} ELSE 0 END"


def odd_sql(length: str, usual: str) -> str:
    """The odd-length bit (4 or 0) of an interval of ``length`` s against its LPAR's ``usual`` length: the
    engine's test (``abs(s - med) > 0.1 * med``, in doubles; NULL: not odd)."""
    return (f"CASE WHEN abs({length} - {usual}) > CAST(0.1 AS DOUBLE) * {usual} THEN {ODD} ELSE 0 END")


def usual_sql(usual: list, d) -> str:
    """Each row's usual length (a DOUBLE expression) from (cec, lpar, system, length) rows: one literal when
    every LPAR has the same, else a CASE over the LPARs (NULL for an LPAR without one), in the SQL of dialect ``d``."""
    def num(v) -> str:
        return "CAST(NULL AS DOUBLE)" if v is None else f"CAST({float(v)!r} AS DOUBLE)"
    lengths = {u for *_k, u in usual}
    if len(lengths) <= 1:
        return num(next(iter(lengths), None))
    q = d.q

    def eq(col: str, v) -> str:
        return f"{q(col)} IS NULL" if v is None else f"{q(col)} = {lit_str(v)}"
    whens = [f"WHEN {eq('cec', c)} AND {eq('lpar', lp)} AND {eq('system', sy)} THEN {num(u)}"
             for c, lp, sy, u in usual if u is not None]
    return "CASE " + " ".join(whens) + " END" if whens else num(None)


def _median_int(values: np.ndarray, counts: np.ndarray) -> int:
    """int(numpy.median) of the multiset ``values`` x ``counts`` (average of the two middle values)."""
    order = np.argsort(values, kind="stable")
    v, c = values[order], counts[order]
    cum = np.cumsum(c)
    n = int(cum[-1])

    def kth(k: int) -> int:
        return int(v[np.searchsorted(cum, k + 1)])
    if n % 2:
        return int(np.float64(kth(n // 2)))
    return int((np.float64(kth(n // 2 - 1)) + np.float64(kth(n // 2))) / 2)


def bucket_params(eng, src: str = "iv") -> list[tuple[str, str, int | None, int | None, int | None, int | None]]:
    """(cec, system, L, off, cec L, cec off) per system, by the rule of ``add_buckets`` over all the data of
    view ``src`` (all the parts of the CECs it holds: :func:`cached_bucket_params`)."""
    d = eng.dialect
    q = d.q
    hist = eng.sql(f"SELECT {q('cec')} AS cec, {q('system')} AS sys, ROUND(interval_s) AS l, COUNT(*) AS n FROM {src} "
                   f"WHERE ROUND(interval_s) > 0 GROUP BY {q('cec')}, {q('system')}, ROUND(interval_s)")
    allsys = eng.sql(f"SELECT DISTINCT {q('cec')} AS cec, {q('system')} AS sys FROM {src}")
    mode: dict[tuple[str, str], int] = {}
    for (cec, sysname), g in hist.groupby(["cec", "sys"], sort=False):
        g = g.sort_values("l", kind="stable")
        vals = g["l"].to_numpy(dtype=np.float64)
        cnt = g["n"].to_numpy(dtype=np.int64)
        mode[(cec, sysname)] = int(vals[int(np.argmax(cnt))]) * _NS
    phase: dict[tuple[str, str], int] = {}
    if mode:
        ptab = " UNION ALL ".join(f"SELECT {lit_str(c)} AS cec, {lit_str(s)} AS sys, CAST({L} AS BIGINT) AS l"
                                  for (c, s), L in mode.items())
        ph = eng.sql(f"WITH p AS ({ptab}) SELECT iv.{q('cec')} AS cec, iv.{q('system')} AS sys, "
                     f"iv.t_end % p.l AS ph, COUNT(*) AS n FROM {src} AS iv JOIN p ON iv.{q('cec')} = p.cec AND "
                     f"iv.{q('system')} = p.sys GROUP BY iv.{q('cec')}, iv.{q('system')}, iv.t_end % p.l")
        for (cec, sysname), g in ph.groupby(["cec", "sys"], sort=False):
            L = mode[(cec, sysname)]
            off = _median_int(g["ph"].to_numpy(dtype=np.int64), g["n"].to_numpy(dtype=np.int64))
            if L >= 60 * _NS:
                off = int(round(off / (60 * _NS))) * 60 * _NS % L
            phase[(cec, sysname)] = off
    out = []
    by_cec: dict[str, list[tuple[int, int]]] = {}
    for (c, s), L in mode.items():
        by_cec.setdefault(c, []).append((L, phase[(c, s)]))
    cec_p: dict[str, tuple[int, int]] = {}
    for c, lst in by_cec.items():
        L = max(x[0] for x in lst)
        off = int(np.median([x[1] for x in lst if x[0] == L])) % L
        cec_p[c] = (L, off)
    for c, s in allsys[["cec", "sys"]].itertuples(index=False):
        L = mode.get((c, s))
        off = phase.get((c, s))
        cl, coff = cec_p.get(c, (None, None))
        out.append((c, s, L, off, cl, coff))
    return out
