"""Per-CEC time-bucket parameters of a dataset, kept between commands (``DATASET/stats.json``).

The buckets of ``report`` (a system's usual interval length and phase; the CEC's common bucket) depend on all
the data of a CEC's systems, not on the window a query asks for.  Computing them at every query meant a pass over
the whole fleet; they are computed once per CEC (over all the interval parts of that CEC only) and kept with a
signature of the parts they were computed from: the sorted paths of the CEC's parts as the manifest entries list
them (compaction merges parts but does not change that list, so it keeps the cache).  A query recomputes only the
CECs whose signature changed (``extract`` does it for the CECs it wrote to, so a query after it finds them ready).
Only the commands that write the dataset write the file (atomically, best effort); a query over CECs the cache
does not cover computes theirs for itself.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["bucket_params_for", "cached_bucket_params", "refresh_stats", "CACHE_NAME"]

CACHE_NAME = "stats.json"
_VERSION = 1


def _signature(ds, cec: str) -> str:
    rels = sorted(row[2] for row in ds.index.part_rows("intervals", [cec]))
    return hashlib.sha256("\n".join(rels).encode()).hexdigest()


def _load(ds) -> dict[str, Any]:
    try:
        doc = json.loads((ds.root / CACHE_NAME).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(doc, dict) or doc.get("version") != _VERSION or not isinstance(doc.get("cecs"), dict):
        return {}
    return doc["cecs"]


def bucket_params_for(ds, cecs: Iterable[str], compute: Callable[[list[str]], list[tuple]],
                      save: bool = False) -> list[tuple]:
    """(cec, system, L, off, cec L, cec off) of every system of ``cecs``: from the cache where its signature
    matches, else ``compute(stale cecs)`` (which reads all the parts of those CECs); with ``save`` (extract,
    compact: the commands that write) the cache is updated.  A query never writes into the dataset."""
    want = sorted(set(cecs))
    cache = _load(ds)
    sigs = {c: _signature(ds, c) for c in want}
    stale = [c for c in want if not isinstance(cache.get(c), dict) or cache[c].get("sig") != sigs[c]]
    if stale:
        fresh = compute(stale)
        for c in stale:
            cache[c] = {"sig": sigs[c], "params": [list(p) for p in fresh if p[0] == c]}
    if stale and save:
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


def cached_bucket_params(ds, eng, cecs: Iterable[str], save: bool = False) -> list[tuple]:
    """:func:`bucket_params` of the systems of ``cecs``, from the dataset's cache or computed over all the parts
    of the CECs whose parts changed (:mod:`app.dataset.stats`; ``save``: update the cache)."""
    def compute(stale: list[str]) -> list[tuple]:
        files = ds.parts("intervals", cecs=stale)
        if not files:
            return []
        from app.dataset.query import bucket_params

        eng.view("iv_cec", files)
        return bucket_params(eng, "iv_cec")
    return bucket_params_for(ds, cecs, compute, save)


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
        cached_bucket_params(ds, eng, want, save=True)
    except (duckdb.Error, OSError):      # a damaged part met here is named by the query that reads it
        pass
    finally:
        eng.close()
