"""The CEC -> LPAR -> processor class -> logical CPU tree.

Beside the LPARs, each CEC has its pool rows (``("pool", cec, type)``); under a processor class whose CPUs share
core ids (SMT), the CPUs are the threads of core rows (``("core", cec, lpar, class, core)``), see
:mod:`app.engine.node_rows`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd


if TYPE_CHECKING:  # pragma: no cover
    from app.engine.workspace import Workspace

__all__ = ["TreeNode", "build_tree", "tree_ident"]


@dataclass
class TreeNode:
    """One node; ``key`` is a NodeKey such as ``("lpar", cec, lpar)``."""

    key: tuple
    level: str
    label: str
    children: list[TreeNode] = field(default_factory=list)
    info: dict[str, Any] = field(default_factory=dict)


def _num(v: Any) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return None if not np.isfinite(f) else f


_INFO_COLS = ("n_cpus", "LPARCPU", "CPI", "formula_set", "Workload_Hint")   # what the nodes take of a level's row


def _index(frame: pd.DataFrame, keys: list[str]) -> dict[tuple, dict]:
    """The rows of ``frame`` by their ``keys``, each a dict of the keys and the columns a node takes (_INFO_COLS):
    the other metric columns are not made into Python objects."""
    out: dict[tuple, dict] = {}
    cols = list(dict.fromkeys([*keys, *(c for c in _INFO_COLS if c in frame.columns)]))
    for rec in frame[cols].to_dict("records"):
        out[tuple(rec[k] for k in keys)] = rec
    return out


def build_tree(ws: Workspace, deep: bool = True, values: bool = True, partitions: bool = True) -> list[TreeNode]:
    """Build the tree from the workspace intervals, metrics and partition data.

    ``deep=False`` builds the CEC and LPAR levels only (their nodes equal the deep tree's, without children):
    the window shows them first and adds the class and CPU levels later (issue 11).  ``values=False`` leaves out
    of the CEC, LPAR and pool nodes what needs their whole-range metrics (busy, cpi, formula_set, workload_hint):
    the nodes and their CPU counts come from the identification rows alone; with ``deep`` the class, core and CPU
    nodes are whole (their levels' metrics are computed, those of the CECs, LPARs and pools not: the window
    shows the deeper levels before their parents' values, issue 23).

    ``info`` holds generation, machine_type, model, serial, os, system, n_cpus,
    busy (LPARCPU over the whole window), cpi, formula_set, and for LPARs
    partition_only / weight / busy_pct / capped from partition data (D0R16).  ``partitions=False`` leaves the
    partition data out (no partition-only LPARs, no partition facts on the others): the window's first tree of
    a load when more files follow, its whole tree coming with the next (issue 23).
    """
    lazy = hasattr(ws, "tree_ident")     # the Workspace keeps ident and coverage beside cached intervals
    iv = None if lazy else ws.intervals
    ident = ws.tree_ident() if lazy else tree_ident(iv)
    roots: dict[str, TreeNode] = {}
    if len(ident):
        cores = deep and _has_cores(ws, ident)
        if values:
            # every level the tree shows in one call: they are computed together (on two threads), the pools'
            # and the SMT cores' rows (_add_pools, _add_cores) with them
            # (the cores' rows always: the window's tree values read them, node_rows.extra_values, and here they
            # share the two threads with the pools' rows instead of coming after them, issue 23)
            extra = ("pool", "core")
            levels = ("cec", "lpar", "class", "cpu_window") if deep else ("cec", "lpar")
            m = ws.window_metrics(levels + extra)
            mi = {"cec": _index(m["cec"], ["cec"]), "lpar": _index(m["lpar"], ["cec", "lpar"])}
        else:       # CPU counts as the metrics count them: distinct (system, CPU) under the node
            cpus = ident[["cec", "lpar", "system", "cpu"]].astype(str)

            def count(keys: list[str]) -> dict[tuple, dict]:
                sizes = cpus.drop_duplicates([*keys, "system", "cpu"]).groupby(keys, sort=False).size()
                return {(k if isinstance(k, tuple) else (k,)): {"n_cpus": int(n)} for k, n in sizes.items()}
            mi = {"cec": count(["cec"]), "lpar": count(["cec", "lpar"])}
        if deep:
            m = ws.window_metrics(("class", "cpu_window") + (("core",) if cores else ()))
            mi.update({"class": _index(m["class"], ["cec", "lpar", "class"]),
                       "cpu": _index(m["cpu_window"], ["cec", "lpar", "class", "cpu"])})

        def minfo(level: str, key: tuple) -> dict:
            r = mi[level].get(key, {})
            n = {"n_cpus": int(r["n_cpus"]) if r.get("n_cpus") is not None else 0}
            if not values and level in ("cec", "lpar"):
                return n
            return {"busy": _num(r.get("LPARCPU")), "cpi": _num(r.get("CPI")), **n,
                    "formula_set": r.get("formula_set"), "workload_hint": r.get("Workload_Hint")}

        lpars: dict[tuple, TreeNode] = {}
        classes: dict[tuple, TreeNode] = {}
        for r in ident.itertuples(index=False):
            cec, lpar, cls, cpu = r.cec, r.lpar, r[7], int(r.cpu)
            if cec not in roots:
                info = {"generation": r.generation, "machine_type": r.machine_type, "model": r.model,
                        "serial": r.serial, **minfo("cec", (cec,))}
                roots[cec] = TreeNode(("cec", cec), "cec", f"{cec} ({r.generation})", [], info)
            lk = (cec, lpar)
            if lk not in lpars:
                info = {"generation": r.generation, "machine_type": r.machine_type, "model": r.model,
                        "serial": r.serial, "os": r.os, "system": r.system, "partition_only": False,
                        **minfo("lpar", lk)}
                lpars[lk] = TreeNode(("lpar", cec, lpar), "lpar", lpar, [], info)
                roots[cec].children.append(lpars[lk])
            if not deep:
                continue
            ck = (cec, lpar, cls)
            if ck not in classes:
                info = {"generation": r.generation, "os": r.os, "system": r.system, **minfo("class", ck)}
                classes[ck] = TreeNode(("class", cec, lpar, cls), "class", cls, [], info)
                lpars[lk].children.append(classes[ck])
            info = {"generation": r.generation, "os": r.os, "system": r.system, **minfo("cpu", (*ck, cpu))}
            classes[ck].children.append(TreeNode(("cpu", cec, lpar, cls, cpu), "cpu", f"CPU {cpu}", [], info))
        if deep:
            _add_cores(ws, ident, classes)
        cov = ws.coverage_frames() if hasattr(ws, "coverage_frames") else None
        _add_coverage(roots, iv, cov)
    _add_partitions(roots, ws.partitions if partitions else None)
    if len(ident):
        _add_pools(ws, ident, roots, values)
    return [roots[k] for k in sorted(roots)]


def _has_cores(ws: Workspace, ident: pd.DataFrame) -> bool:
    """Some processor class has SMT core rows (``_add_cores`` asks for the cores' window frame)."""
    from app.engine.node_rows import core_map

    return bool(core_map(ident))


def _add_pools(ws: Workspace, ident: pd.DataFrame, roots: dict[str, TreeNode], values: bool) -> None:
    """Pool rows under each CEC, after its LPARs: every CPU of one processor type of the CEC's LPARs with
    counters (``app.engine.node_rows``); ``values``: with the whole-window busy and CPI of ``views.pools``."""
    from app.engine.node_rows import POOL_LABEL, pool_of

    f = pd.DataFrame({"cec": ident["cec"].astype(str).to_numpy(), "pool": pool_of(ident["class"]),
                      "lpar": ident["lpar"].astype(str).to_numpy(), "system": ident["system"].astype(str).to_numpy(),
                      "cpu": ident["cpu"].to_numpy()}).drop_duplicates()
    vals: dict[tuple, dict] = {}
    if values:
        from app.engine.node_rows import window_frame

        frame = ws.window_metrics(("pool",))["pool"] if hasattr(ws, "window_metrics") else window_frame(ws, "pool")
        vals = _index(frame, ["cec", "class"])
    for (cec, typ), g in f.groupby(["cec", "pool"], sort=True):
        root = roots.get(str(cec))
        if root is None:
            continue
        r = vals.get((cec, typ), {})
        info = {"generation": root.info.get("generation"), "n_cpus": len(g), "n_lpars": int(g["lpar"].nunique()),
                "pool": True}
        if values:
            info.update(busy=_num(r.get("LPARCPU")), cpi=_num(r.get("CPI")), formula_set=r.get("formula_set"))
        root.children.append(TreeNode(("pool", cec, typ), "pool", POOL_LABEL.format(type=typ), [], info))


def _add_cores(ws: Workspace, ident: pd.DataFrame, classes: dict[tuple, TreeNode]) -> None:
    """Core -> thread nodes under the processor classes whose CPUs share core ids (SMT): a core row sums its
    threads' counters (``node_rows.core_metrics``); other classes keep their CPUs directly."""
    from app.engine.node_rows import core_map, window_frame

    cmap = core_map(ident)
    if not cmap:
        return
    frame = ws.window_metrics(("core",))["core"] if hasattr(ws, "window_metrics") else window_frame(ws, "core")
    m = _index(frame, ["cec", "lpar", "class", "core"])
    for ck, cores in cmap.items():
        node = classes.get(ck)
        if node is None:
            continue
        by_cpu = {int(c.key[-1]): c for c in node.children}
        kids = []
        for core, cpus in sorted(cores.items()):
            threads = [by_cpu[c] for c in cpus if c in by_cpu]
            for i, t in enumerate(threads):
                t.info.update(core=core, thread=i)
            r = m.get((*ck, core), {})
            info = {"generation": node.info.get("generation"), "os": node.info.get("os"),
                    "system": node.info.get("system"), "n_cpus": len(threads), "threads": len(threads),
                    "busy": _num(r.get("LPARCPU")), "cpi": _num(r.get("CPI")), "formula_set": r.get("formula_set")}
            kids.append(TreeNode(("core", *ck, core), "core", f"Core {core}", threads, info))
        placed = {c for cpus in cores.values() for c in cpus}
        node.children = kids + [c for c in node.children if int(c.key[-1]) not in placed]   # CPUs without a core id
        node.info["cores"] = len(kids)


def tree_ident(iv: pd.DataFrame) -> pd.DataFrame:
    """The identification columns of the first interval row of every CPU node, as text, in tree order."""
    if not len(iv):
        return pd.DataFrame({c: pd.Series(dtype=object) for c in _IDENT_COLS})
    return _ident(iv, ["cec", "lpar", "class", "cpu"]).reset_index(drop=True)


_IDENT_COLS = ["cec", "machine_type", "model", "serial", "lpar", "system", "os", "class", "cpu", "generation", "core"]


def _ident(iv: pd.DataFrame, keys: list[str]) -> pd.DataFrame:
    """The identification columns of the first row of every node (``keys``), as text, in tree order."""
    cols = _IDENT_COLS
    codes = []
    for c in keys:
        col = iv[c]
        if isinstance(col.dtype, pd.CategoricalDtype):     # duplicates found on the codes: no strings per row
            codes.append(col.cat.codes.to_numpy(np.int64))
        else:
            codes.append(pd.factorize(col.to_numpy(), use_na_sentinel=False)[0].astype(np.int64))
    if codes:
        key = np.zeros(len(iv), np.int64)
        for c in codes:
            key = key * np.int64(int(c.max()) + 2 if len(c) else 1) + c + 1
        first = np.unique(key, return_index=True)[1]
        first.sort()
        rows = iv[cols].iloc[first]
    else:
        rows = iv[cols]
    ident = rows.astype({"cec": str, "lpar": str, "class": str, "machine_type": str, "model": str, "serial": str,
                         "system": str, "os": str, "generation": str})
    return ident.sort_values(["cec", "lpar", "class", "cpu"])


def _add_coverage(roots: dict[str, TreeNode], iv: pd.DataFrame,
                  cov: dict[str, pd.DataFrame] | None = None) -> None:
    """``coverage_pct`` / ``coverage_note`` on CEC and LPAR nodes whose parts cover different times (``cov``:
    the coverage frames of the CEC and LPAR levels when known, e.g. from the workspace cache)."""
    from app.engine.partitions import coverage

    cov = cov if cov is not None else {lv: coverage(iv, lv) for lv in ("cec", "lpar")}
    for rec in cov["cec"].to_dict("records"):
        node = roots.get(str(rec["cec"]))
        if node is not None:
            node.info.update(coverage_pct=rec["coverage_pct"], coverage_note=rec["coverage_note"])
    by_key = {n.key: n for root in roots.values() for n in root.children}
    for rec in cov["lpar"].to_dict("records"):
        node = by_key.get(("lpar", str(rec["cec"]), str(rec["lpar"])))
        if node is not None:
            node.info.update(coverage_pct=rec["coverage_pct"], coverage_note=rec["coverage_note"])


def _add_partitions(roots: dict[str, TreeNode], parts: pd.DataFrame | None) -> None:
    """Partition data (D0R16) onto the LPAR nodes; partitions without counters become partition-only LPARs.

    ``partition_cpus`` counts the CPUs of every processor type (4 CPs + 2 zIIPs = 6); ``partition_busy`` is in
    LPARCPU's unit (% of one CPU, summed over the LPAR's CPUs), so a partition-only LPAR's ``busy`` compares with
    the LPARCPU of LPARs with counters; ``busy_pct`` is the per-CPU average.
    """
    from app.engine.partitions import partition_summary

    ps = partition_summary(parts)
    for r in ps.to_dict("records"):
        root = roots.get(r["cec"])
        if root is None:
            root = roots[r["cec"]] = TreeNode(("cec", r["cec"]), "cec", r["cec"], [],
                                              {"generation": None, "busy": None, "cpi": None, "n_cpus": 0})
        extra = {"weight": int(r["weight"]), "weights": r["weights"], "busy_pct": _num(r["busy_per_cpu_pct"]), "capped": bool(r["capped"]),
                 "lpar_number": int(r["lpar_number"]), "partition_cpus": int(r["n_cpus"]),
                 "partition_class": r["processors"], "partition_busy": _num(r["busy_sum_pct"])}
        node = next((c for c in root.children if c.key == ("lpar", r["cec"], r["lpar"])), None)
        if node is not None:
            node.info.update(extra)
            continue
        info = {"partition_only": True, "generation": root.info.get("generation"), "os": None, "system": None,
                "n_cpus": int(r["n_cpus"]), "busy": _num(r["busy_sum_pct"]), "cpi": None, **extra}
        root.children.append(TreeNode(("lpar", r["cec"], r["lpar"]), "lpar", r["lpar"], [], info))
    for root in roots.values():
        root.children.sort(key=lambda n: (n.info.get("partition_only", False), n.label))
