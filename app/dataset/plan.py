"""What a query learns before its statement is written, cheaply (issue 24, "Pruned and compact").

* :func:`data_profile`: one pass over the few columns of the parts a query reads (machine type, CSVN, generation,
  ``qbits``) for the formula sets to apply and whether any row is marked implausible; :func:`profile_of` gives
  the same from the per-CEC, per-month profiles ``extract`` keeps (:func:`app.dataset.stats.cached_profile`).
* :func:`pushdown_window`: the window's bounds widened to hold every row the statement can keep, for a view that
  lets DuckDB skip the rest while reading (:meth:`app.dataset.query.DuckDBEngine.window_view`).

The partitions (CECs, months) a query reads come from the manifest index (:func:`app.dataset.query.query_partitions`)
and the time buckets from the per-CEC cache (:mod:`app.dataset.stats`): no whole-fleet pass.  :func:`scope` gives
the same partitions as directory tests, for what a query says of leftovers of killed extracts (those in its own
partitions only).
"""

from __future__ import annotations

from collections.abc import Callable

import pandas as pd

__all__ = ["data_profile", "generation_map", "profile_of", "pushdown_window", "scope", "set_counters", "hint_counters_of"]

_DAY = 86_400 * 1_000_000_000


def generation_map(eng, sets: dict, src: str = "iv") -> list[tuple[str, int, str, str]]:
    """(machine type, CSVN, generation, formula-set version) for every pair in the data of view ``src`` (the
    parts a query reads: its rows are the only ones the mapping applies to)."""
    return data_profile(eng, sets, src)[0]


def data_profile(eng, sets: dict, src: str = "iv") -> tuple[list[tuple[str, int, str, str]], set[str],
                                                              dict[str, bool]]:
    """What the statement needs to know of the rows of view ``src`` before it is written, in one pass over three
    small columns and ``qbits``: the :func:`generation_map`, the generations stored, and whether any row is marked
    implausible or has lost data, and whether every row states its machine type and CSVN
    (``{"implausible": .., "lost": .., "typed": ..}``, :func:`app.dataset.query.build_sql`'s
    arguments: without such rows the sums need no per-row test)."""
    prof = eng.sql(f"SELECT machine_type, csvn, generation, MAX(CASE WHEN qbits % 256 >= 128 THEN 1 ELSE 0 END) "
                   f"AS bad, MAX(CASE WHEN qbits % 2 = 1 THEN 1 ELSE 0 END) AS lost FROM {src} "
                   "GROUP BY machine_type, csvn, generation")
    rows = [(None if pd.isna(mt) else str(mt), None if pd.isna(cv) else int(cv), None if pd.isna(g) else str(g),
             bool(pd.notna(b) and b > 0), bool(pd.notna(lo) and lo > 0))
            for mt, cv, g, b, lo in prof[["machine_type", "csvn", "generation", "bad", "lost"]].itertuples(index=False)]
    return profile_of(rows, sets)


def profile_of(rows, sets: dict) -> tuple[list[tuple[str, int, str, str]], set[str], dict[str, bool]]:
    """:func:`data_profile` of (machine type, CSVN, generation, implausible, lost) rows: those of a scan, or of
    the dataset's cache (:func:`app.dataset.stats.cached_profile`, per CEC and month: the rows of whole
    partitions, a superset of a window's, which gives the statement the same results: a pair no row has maps no
    row, and a per-row test finds nothing to leave out).  ``marks["whole"]``: the counters every row holds, or no
    row does, by the cached rows' counts (a superset's too: in any subset of the rows, all or none)."""
    from app.engine.catalog import select_generation

    out = []
    for mt, cv in sorted({(r[0], r[1]) for r in rows if r[0] is not None and r[1] is not None}):
        g, _how = select_generation(sets, mt, cv)
        out.append((mt, cv, g, sets[g].version))
    stored = {r[2] for r in rows if r[2] is not None}
    marks = {"implausible": any(r[3] for r in rows), "lost": any(r[4] for r in rows),
             "typed": all(pd.notna(mt) and pd.notna(cv) for mt, cv, *_rest in rows)}   # every row has its pair
    # counters every row holds, or no row: their quality count is all or nothing in any group (cached profiles)
    counts = [r[5] if len(r) > 5 and isinstance(r[5], dict) else {} for r in rows]
    names = set.intersection(*(set(c) - {"rows"} for c in counts)) if counts else set()
    marks["whole"] = frozenset(n for n in names if all(c[n] == c["rows"] for c in counts)
                               or all(c[n] == 0 for c in counts))
    return out, stored, marks


def pushdown_window(spec) -> tuple[int | None, int | None]:
    """(lo, hi) nanoseconds a row's end must lie in for ``spec``'s window, a day wider on each side (whatever
    zone the window's times are read in, no row the statement keeps lies outside); (None, None) without one."""
    lo = int(pd.Timestamp(spec.start).value) - _DAY if spec.start is not None else None
    hi = int(pd.Timestamp(spec.end).value) + _DAY if spec.end is not None else None
    return lo, hi


def scope(spec) -> tuple[set[str] | None, Callable[[str], bool] | None]:
    """(CECs, a test of a ``YYYY-MM``) of the partitions ``spec`` can touch, None for all: the rules of
    :func:`app.dataset.query.query_partitions` (nodes, ``--where``'s top-level ``cec``/``month`` terms, the window)
    without the manifest index, so a partition directory holding only a killed extract's parts is in it too."""
    from app.dataset.query import _node_cecs
    from app.dataset.sql import where_partitions

    cecs = _node_cecs(spec.nodes)
    pinned = where_partitions(spec.where)
    if "cec" in pinned:
        cecs = set(pinned["cec"]) if cecs is None else cecs & set(pinned["cec"])
    pin = set(pinned["month"]) if "month" in pinned else None
    if spec.start is None and spec.end is None and pin is None:
        return cecs, None
    lo = pd.Timestamp(spec.start).strftime("%Y-%m") if spec.start is not None else ""
    hi = pd.Timestamp(spec.end).strftime("%Y-%m") if spec.end is not None else "9999-99"

    def month_ok(m: str) -> bool:
        return lo <= m <= hi and (pin is None or m in pin)

    return cecs, month_ok


def set_counters(fs) -> set[str]:
    """``fs.counters()`` (every counter a formula of the set reads), each compiled formula's counters worked out
    once (:func:`app.dataset.sql._counters_of`; a compiled formula does not change)."""
    from app.dataset.sql import _counters_of

    return set().union(*(_counters_of(m.compiled) for m in fs.metrics.values() if m.compiled is not None))


_HINTS: dict[tuple, tuple] = {}     # (the sets' formulas by identity, the counters) -> (those formulas, the result)


def hint_counters_of(sets: dict, counters) -> list[str]:
    """:func:`app.engine.metrics.hint_counters` of ``sets`` and ``counters``, once per process for the same compiled
    formulas (the catalog's sets share them between loads; a compiled formula does not change) and counters."""
    from app.engine.metrics import hint_counters

    held = [m.compiled for fs in sets.values() for m in fs.metrics.values()]
    key = (tuple((g, bool(fs.workload_hint), tuple((mid, id(m.compiled)) for mid, m in fs.metrics.items()))
                 for g, fs in sets.items()), frozenset(counters))
    hit = _HINTS.get(key)      # (the formulas held by the entry: their ids stand for them while it is kept)
    if hit is None:
        if len(_HINTS) >= 32:
            _HINTS.clear()
        hit = _HINTS[key] = (held, hint_counters(sets, counters))
    return list(hit[1])
