"""The CEC -> LPAR -> processor class -> logical CPU tree."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from app.engine.metrics import compute_metrics

if TYPE_CHECKING:  # pragma: no cover
    from app.engine.workspace import Workspace

__all__ = ["TreeNode", "build_tree"]


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


def _index(frame: pd.DataFrame, keys: list[str]) -> dict[tuple, dict]:
    out: dict[tuple, dict] = {}
    for rec in frame.to_dict("records"):
        out[tuple(rec[k] for k in keys)] = rec
    return out


def build_tree(ws: Workspace) -> list[TreeNode]:
    """Build the tree from the workspace intervals, metrics and partition data.

    ``info`` holds generation, machine_type, model, serial, os, system, n_cpus,
    busy (LPARCPU over the whole window), cpi, formula_set, and for LPARs
    partition_only / weight / busy_pct / capped from partition data (D0R16).
    """
    iv = ws.intervals
    sets, counters = ws.formula_sets, ws.counters
    roots: dict[str, TreeNode] = {}
    if len(iv):
        m = {lv: compute_metrics(iv, sets, counters, by=lv) for lv in ("cec", "lpar", "class", "cpu_window")}
        mi = {"cec": _index(m["cec"], ["cec"]), "lpar": _index(m["lpar"], ["cec", "lpar"]),
              "class": _index(m["class"], ["cec", "lpar", "class"]),
              "cpu": _index(m["cpu_window"], ["cec", "lpar", "class", "cpu"])}
        ident = iv[["cec", "machine_type", "model", "serial", "lpar", "system", "os", "class", "cpu",
                    "generation"]].drop_duplicates(["cec", "lpar", "class", "cpu"]).astype(
            {"cec": str, "lpar": str, "class": str, "machine_type": str, "model": str, "serial": str,
             "system": str, "os": str, "generation": str})
        ident = ident.sort_values(["cec", "lpar", "class", "cpu"])

        def minfo(level: str, key: tuple) -> dict:
            r = mi[level].get(key, {})
            return {"busy": _num(r.get("LPARCPU")), "cpi": _num(r.get("CPI")),
                    "n_cpus": int(r["n_cpus"]) if r.get("n_cpus") is not None else 0,
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
            ck = (cec, lpar, cls)
            if ck not in classes:
                info = {"generation": r.generation, "os": r.os, "system": r.system, **minfo("class", ck)}
                classes[ck] = TreeNode(("class", cec, lpar, cls), "class", cls, [], info)
                lpars[lk].children.append(classes[ck])
            info = {"generation": r.generation, "os": r.os, "system": r.system, **minfo("cpu", (*ck, cpu))}
            classes[ck].children.append(TreeNode(("cpu", cec, lpar, cls, cpu), "cpu", f"CPU {cpu}", [], info))
    _add_partitions(roots, ws.partitions)
    return [roots[k] for k in sorted(roots)]


def _add_partitions(roots: dict[str, TreeNode], parts: pd.DataFrame | None) -> None:
    if parts is None or not len(parts):
        return
    p = parts.copy()
    for c in ("cec", "lpar"):
        p[c] = p[c].astype(str)
    agg = p.groupby(["cec", "lpar"], sort=True).agg(
        lpar_number=("lpar_number", "last"), cpus=("cpus", "last"), weight=("weight", "last"),
        capped=("capped", "last"), busy_pct=("busy_pct", "mean"),
        cls=("class", lambda s: ",".join(sorted({str(x) for x in s})))).reset_index()
    for r in agg.itertuples(index=False):
        root = roots.get(r.cec)
        if root is None:
            root = roots[r.cec] = TreeNode(("cec", r.cec), "cec", r.cec, [], {"generation": None, "busy": None,
                                                                             "cpi": None, "n_cpus": 0})
        extra = {"weight": _num(r.weight), "busy_pct": _num(r.busy_pct), "capped": r.capped,
                 "lpar_number": r.lpar_number, "partition_cpus": r.cpus, "partition_class": r.cls}
        node = next((c for c in root.children if c.key == ("lpar", r.cec, r.lpar)), None)
        if node is not None:
            node.info.update(extra)
            continue
        info = {"partition_only": True, "generation": root.info.get("generation"), "os": None, "system": None,
                "n_cpus": int(r.cpus) if _num(r.cpus) is not None else 0, "busy": None, "cpi": None, **extra}
        root.children.append(TreeNode(("lpar", r.cec, r.lpar), "lpar", r.lpar, [], info))
    for root in roots.values():
        root.children.sort(key=lambda n: (n.info.get("partition_only", False), n.label))
