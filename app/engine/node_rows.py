"""The tree's pool and core nodes: which interval rows they hold and their metric rows (issue 26).

Two node kinds beside the CEC -> LPAR -> class -> CPU levels:

* ``("pool", cec, type)``: a CEC pool -- every CPU of processor type ``type`` (GCP, zIIP, IFL, ICF; z/VM's
  ``CP`` is the GCP pool) of every LPAR of the CEC with counters.  Its rows are those of
  :func:`app.engine.views.pools` (the numbers of ``report --by pool``).
* ``("core", cec, lpar, class, core)``: one core of an SMT class -- its threads (logical CPUs sharing the core
  id the data carries: z/VM D0R2/D5R13, SMF 113 ``SMF113_1_CoreId``).  A core row sums the counter deltas of its
  threads, then applies the formulas (ratio of sums); the MT-diagnostic counters, kept on thread 0 only, are the
  core's own.  A class gets core nodes only where the data says so: some core id shared by two CPUs.

Both are summed the one way every level is (``app.engine.aggregate``); pandas/numpy, no Qt.
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

__all__ = ["EXTRA_KINDS", "POOL_LABEL", "is_extra", "node_mask", "pool_of", "pool_type_of", "extra_metrics",
           "core_map", "core_metrics", "extra_values", "window_frame", "pool_level_frame"]

EXTRA_KINDS = ("pool", "core")
POOL_LABEL = "{type} pool"
_WINDOW = ("class", "lpar", "cec", "cpu_window")       # whole-window ``by`` names; the rest are per interval
_SEP = "\x00"


def pool_type_of(cls: str) -> str:
    """The pool of a processor class: z/VM's general-purpose ``CP`` is z/OS's ``GCP``."""
    from app.engine.views import POOL_OF

    return POOL_OF.get(str(cls), str(cls))


def pool_of(classes: pd.Series) -> np.ndarray:
    """The pool type of every row's class."""
    s = classes.astype(str)
    return s.map({c: pool_type_of(c) for c in pd.unique(s)}).to_numpy(dtype=object)


def is_extra(key: Iterable) -> bool:
    """A pool or core NodeKey."""
    key = tuple(key)
    return bool(key) and key[0] in EXTRA_KINDS


def _str_col(iv: pd.DataFrame, c: str) -> np.ndarray:
    col = iv[c]
    if isinstance(col.dtype, pd.CategoricalDtype):
        return col.cat.categories.astype(str).to_numpy(dtype=object)[col.cat.codes.to_numpy()] \
            if len(col.cat.categories) else np.full(len(col), "", dtype=object)
    return col.astype(str).to_numpy(dtype=object)


def _isin(iv: pd.DataFrame, c: str, values) -> np.ndarray:
    """True where column ``c`` (as text) is one of ``values``; a categorical column is compared on its codes."""
    want = {str(v) for v in values}
    col = iv[c]
    if isinstance(col.dtype, pd.CategoricalDtype):
        hit = [i for i, cat in enumerate(col.cat.categories.astype(str)) if cat in want]
        return np.isin(col.cat.codes.to_numpy(), hit) if hit else np.zeros(len(col), dtype=bool)
    return np.isin(col.astype(str).to_numpy(dtype=object), list(want))


def node_mask(iv: pd.DataFrame, key: tuple) -> np.ndarray:
    """True at the interval rows of a pool or core node (``key``)."""
    kind = key[0]
    m = _isin(iv, "cec", [key[1]])
    if kind == "pool":
        col = iv["class"]
        names = pd.unique(col.cat.categories.astype(str) if isinstance(col.dtype, pd.CategoricalDtype)
                          else col.astype(str))
        return m & _isin(iv, "class", [c for c in names if pool_type_of(c) == str(key[2])])
    if kind == "core":
        m &= _isin(iv, "lpar", [key[2]]) & _isin(iv, "class", [key[3]])
        return m & (iv["core"].to_numpy() == int(key[4]))
    raise ValueError(f"not a pool or core node: {key!r}")


def _split(nodes: list) -> tuple[list, list, list]:
    std = [tuple(k) for k in nodes if not is_extra(k)]
    pools = [tuple(k) for k in nodes if tuple(k)[0] == "pool"]
    cores = [tuple(k) for k in nodes if tuple(k)[0] == "core"]
    return std, pools, cores


def extra_metrics(ws, by: str, start=None, end=None, nodes: list | None = None, summary: bool = False,
                  shift=None) -> pd.DataFrame:
    """``Workspace.metrics`` for a node list holding pool or core keys: the ordinary nodes' rows as usual, then
    the pools' rows (class-like rows, ``lpar`` = ``(pool)``, with ``n_lpars``), then the cores' (class rows with
    a ``core`` column).  ``by`` only says per interval or over the window (``class``/``lpar``/``cec``)."""
    std, pool_keys, core_keys = _split(list(nodes or []))
    parts = []
    if std:
        if shift is None:
            parts.append(ws.metrics(by=by, start=start, end=end, nodes=std, summary=summary))
        else:
            from app.engine.shift import shifted_metrics
            parts.append(shifted_metrics(ws, by=by, start=start, end=end, nodes=std, shift=shift, summary=summary))
    per_interval = by not in _WINDOW
    if pool_keys:
        parts.append(_pool_rows(ws, pool_keys, start, end, per_interval, summary, shift))
    if core_keys:
        parts.append(core_metrics(ws, core_keys, start, end, per_interval, summary, shift))
    parts = [p for p in parts if len(p)]
    if not parts:             # no rows: the level's empty frame
        from app.engine.metrics import level_metrics, metrics_level
        return level_metrics(ws.intervals.iloc[:0], ws.formula_sets, ws.counters, metrics_level(by))
    return pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0].reset_index(drop=True)


def pool_level_frame(ws, start=None, end=None) -> pd.DataFrame:
    """Every CEC pool's interval rows and whole-window summary rows over ``(start, end]`` in the report order:
    what ``Workspace.prepare_pools`` keeps, so a selected pool's rows are a slice of it (a pool's rows are
    summed from its own CPUs' rows alone, whichever other pools are computed with it)."""
    from app.engine.metrics import with_summary
    from app.engine.views import pool_levels

    wm = getattr(ws, "_wm", {})
    if start is None and end is None and "pool" in wm:      # the tree's window rows of the pools
        body, window = pool_levels(ws, ("class_interval",))[0], wm["pool"]
    else:
        body, window = pool_levels(ws, ("class_interval", "class"), start, end)
    return with_summary(body.assign(summary=False), window.assign(summary=True), "class_interval")


def pool_frames(ws) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The pools' whole-range window rows (the tree's: :func:`window_frame` ``"pool"``) and their level frame
    (:func:`pool_level_frame`), from one frame of pool rows (``views.pool_levels``: its per-row arrays shared by
    both; 0.54-0.56 instead of 0.66-0.68 CPU s for the two on the month)."""
    from app.engine.metrics import with_summary
    from app.engine.views import pool_levels

    body, window = pool_levels(ws, ("class_interval", "class"))
    return window, with_summary(body.assign(summary=False), window.assign(summary=True), "class_interval")


def _prepared_pool_rows(ws, keys: list, start, end, per_interval: bool, summary: bool) -> pd.DataFrame | None:
    """The pools' rows sliced from the workspace's prepared pool frame (prepared now if it is not); None when the
    workspace has none for the window."""
    if not hasattr(ws, "prepare_pools") or not ws.prepare_pools(start, end):
        return None
    lf = ws._lv.get(("pool", str(start), str(end)))
    if lf is None:
        return None
    parts = [p for p in (lf.positions([k]) for k in keys) if p is not None]    # a pool without rows: none
    pos = np.unique(np.concatenate(parts)) if parts else np.zeros(0, np.int64)
    if per_interval:
        return lf.frame.take(pos if summary else pos[~lf.summary[pos]]).reset_index(drop=True)
    return lf.frame.take(pos[lf.summary[pos]]).assign(summary=False).reset_index(drop=True)


def _pool_rows(ws, keys: list, start, end, per_interval: bool, summary: bool, shift) -> pd.DataFrame:
    from app.engine.metrics import with_summary
    from app.engine.views import pools

    if shift is None:      # a slice of every pool's prepared rows (a pool selection as fast as an LPAR's)
        hit = _prepared_pool_rows(ws, keys, start, end, per_interval, summary)
        if hit is not None:
            return hit
    cecs = [("cec", c) for c in dict.fromkeys(k[1] for k in keys)]
    want = {(str(k[1]), str(k[2])) for k in keys}

    def pick(frame: pd.DataFrame, is_summary: bool) -> pd.DataFrame:
        keep = [(str(c), str(t)) in want for c, t in zip(frame["cec"], frame["class"], strict=True)]
        return frame.loc[keep].assign(summary=is_summary)

    body = pick(pools(ws, start, end, nodes=cecs, shift=shift, per_interval=per_interval), False)
    window = pick(pools(ws, start, end, nodes=cecs, shift=shift), True) if summary and per_interval else None
    return with_summary(body, window, "class_interval" if per_interval else "class")


def core_metrics(ws, keys: list, start=None, end=None, per_interval: bool = True, summary: bool = False,
                 shift=None) -> pd.DataFrame:
    """Metric rows of core nodes: per interval (or over the window) the summed counters of each core's threads,
    then the formulas.  Columns as a class row plus ``core`` (the core id)."""
    from app.engine.aggregate import select_rows
    from app.engine.metrics import level_metrics, with_summary
    from app.engine.shift import apply_shift

    iv = apply_shift(ws.intervals, shift) if shift is not None else ws.intervals
    rows = select_rows(iv.loc[_cores_mask(iv, keys)], start, end)
    # one class name per core (zero-padded so cores sort by number), split again after the sums; the names are
    # made once per distinct (class, core), not per row
    codes, uniq = pd.factorize(pd.MultiIndex.from_arrays([_str_col(rows, "class"), rows["core"].to_numpy()]))
    names = np.array([f"{c}{_SEP}{int(n):06d}" for c, n in uniq], dtype=object) if len(uniq) else \
        np.zeros(0, dtype=object)
    tagged = rows.assign(**{"class": names[codes] if len(codes) else np.zeros(0, dtype=object)})
    level = "class_interval" if per_interval else "class"

    def frame(lv: str, is_summary: bool) -> pd.DataFrame:
        out = level_metrics(tagged, ws.formula_sets, ws.counters, lv, is_summary=is_summary)
        return out

    out = with_summary(frame(level, False), frame("class", True) if summary and per_interval else None, level)
    parts = out["class"].astype(str).str.split(_SEP, n=1, expand=True) if len(out) else None
    if parts is None:
        return out.assign(core=pd.Series(dtype=np.int64))
    out["class"] = parts[0].to_numpy(dtype=object)
    out.insert(out.columns.get_loc("class") + 1, "core", parts[1].astype(np.int64).to_numpy())
    return out


def _cores_mask(iv: pd.DataFrame, keys: list) -> np.ndarray:
    """True at the rows of the core ``keys`` (one pass per SMT class, the text columns taken once)."""
    by_class: dict[tuple, set[int]] = {}
    for k in keys:
        by_class.setdefault((str(k[1]), str(k[2]), str(k[3])), set()).add(int(k[4]))
    mask = np.zeros(len(iv), dtype=bool)
    if not by_class:
        return mask
    core = iv["core"].to_numpy()
    for (c, lp, k), cores in by_class.items():
        mask |= _isin(iv, "cec", [c]) & _isin(iv, "lpar", [lp]) & _isin(iv, "class", [k]) & np.isin(core, sorted(cores))
    return mask


def core_map(iv_or_ident: pd.DataFrame) -> dict[tuple, dict[int, list[int]]]:
    """Per SMT class ``(cec, lpar, class)``: core id -> its CPUs (ascending).  A class is SMT where some core id
    (``>= 0``) is shared by two or more CPUs; classes without core ids or with one CPU per core are left out."""
    if "core" not in iv_or_ident.columns or not len(iv_or_ident):
        return {}
    from app.engine.aggregate import _node_codes

    cols = ["cec", "lpar", "class", "core", "cpu"]
    f = iv_or_ident[cols]
    cored = f["core"].to_numpy() >= 0
    if not cored.any():
        return {}
    f = f.loc[cored] if not cored.all() else f
    # one row per distinct (cec, lpar, class, core, cpu), found on the columns' codes: the text below is made for
    # these few rows, not for every interval row (0.23 s on the month's 368,640 rows)
    f = f.iloc[np.sort(np.unique(_node_codes(f, cols), return_index=True)[1])]
    f = pd.DataFrame({c: (_str_col(f, c) if c in ("cec", "lpar", "class") else f[c].to_numpy(np.int64))
                      for c in cols}).drop_duplicates()
    out: dict[tuple, dict[int, list[int]]] = {}
    for (cec, lpar, cls), g in f.groupby(["cec", "lpar", "class"], sort=True):
        cores: dict[int, list[int]] = {}
        for core, cpu in sorted(zip(g["core"].tolist(), g["cpu"].tolist())):
            cores.setdefault(int(core), []).append(int(cpu))
        if any(len(v) > 1 for v in cores.values()):
            out[(str(cec), str(lpar), str(cls))] = cores
    return out


def window_frame(ws, kind: str, start=None, end=None) -> pd.DataFrame:
    """Every pool's (``kind="pool"``) or every SMT core's (``"core"``) rows over ``(start, end]``."""
    from app.engine.views import pools

    if kind == "pool":
        return pools(ws, start, end)
    keys = [("core", *ck, core) for ck, cores in core_map(ws.intervals).items() for core in cores]
    return core_metrics(ws, keys, start, end, per_interval=False)


def extra_values(ws, start=None, end=None) -> dict[tuple, dict]:
    """Busy (LPARCPU) and CPI over ``(start, end]`` of every pool and core node (the tree's values); over the
    whole range from the workspace's window frames (kept in its cache beside cached intervals)."""
    out: dict[tuple, dict] = {}
    if start is None and end is None and hasattr(ws, "window_metrics"):
        # one level a call: the frames cached by the tree's own calls
        p, c = ws.window_metrics(("pool",))["pool"], ws.window_metrics(("core",))["core"]
    else:
        p = _cached(ws, ("tree-pools", str(start), str(end)), lambda: window_frame(ws, "pool", start, end))
        c = _cached(ws, ("tree-cores", str(start), str(end)), lambda: window_frame(ws, "core", start, end))
    for cec, typ, busy, cpi in zip(p["cec"], p["class"], p["LPARCPU"], p["CPI"], strict=True):
        out[("pool", str(cec), str(typ))] = {"busy": _num(busy), "cpi": _num(cpi)}
    if len(c):
        for r in c[["cec", "lpar", "class", "core", "LPARCPU", "CPI"]].itertuples(index=False):
            out[("core", str(r[0]), str(r[1]), str(r[2]), int(r[3]))] = {"busy": _num(r[4]), "cpi": _num(r[5])}
    return out


def _cached(ws, key: tuple, compute):
    """A frame kept in the workspace's cache of derived frames (dropped when files are added)."""
    return ws._cached(key, compute) if hasattr(ws, "_cached") else compute()


def _num(v) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if np.isfinite(f) else None
