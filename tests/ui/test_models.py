"""Model conformance (qtmodeltester) and the tree's shape over the real engine tree."""

from __future__ import annotations

import pandas as pd
from PySide6.QtCore import Qt

from app.engine import TreeNode
from app.findings import make_finding
from app.ui.frames import FROZEN, ColDef
from app.ui.health import COL_FILE, COL_MESSAGE, COL_OFFSET, FindingsModel, FindingsProxy
from app.ui.roles import Role
from app.ui.table_model import IntervalTableModel
from app.ui.tree_model import MachineTreeModel, TreeFilterProxy


def build_tree(spec: str) -> list[TreeNode]:
    """Tree from lines 'CEC;LPAR;CLASS;CPU' (a tiny DSL, as Hotspot's model tests do)."""
    roots: dict[tuple, TreeNode] = {}
    levels = ("cec", "lpar", "class", "cpu")
    for line in spec.strip().splitlines():
        parts = line.strip().split(";")
        parent = None
        for depth in range(len(parts)):
            key = (levels[depth], *parts[: depth + 1])
            node = roots.get(key)
            if node is None:
                node = TreeNode(key=key, level=levels[depth], label=parts[depth], children=[],
                                info={"n_cpus": 1, "busy": 50.0, "cpi": 3.0})
                roots[key] = node
                if parent is not None:
                    parent.children.append(node)
            parent = node
    return [n for k, n in roots.items() if k[0] == "cec"]


def dump(model, parent=None, depth=0) -> list[str]:
    from PySide6.QtCore import QModelIndex

    parent = parent or QModelIndex()
    out = []
    for r in range(model.rowCount(parent)):
        idx = model.index(r, 0, parent)
        out.append("  " * depth + model.data(idx).split(" · ")[0])
        out += dump(model, idx, depth + 1)
    return out


SPEC = """
CEC1;LPAR1;GCP;0
CEC1;LPAR1;GCP;1
CEC1;LPAR1;zIIP;2
CEC1;LPAR2;IFL;0
CEC2;LPAR3;GCP;0
"""


def test_tree_shape_and_modeltester(qtmodeltester):
    model = MachineTreeModel()
    model.set_roots(build_tree(SPEC))
    assert dump(model) == ["CEC1", "  LPAR1", "    GCP", "      CPU 0", "      CPU 1", "    zIIP", "      CPU 2",
                           "  LPAR2", "    IFL", "      CPU 0", "CEC2", "  LPAR3", "    GCP", "      CPU 0"]
    qtmodeltester.check(model)
    model.set_roots(build_tree("CEC9;L;GCP;0"))
    qtmodeltester.check(model)
    idx = model.index_of_key(("cpu", "CEC9", "L", "GCP", "0"))
    assert idx.isValid() and idx.data(Role.NODE_KEY) == ("cpu", "CEC9", "L", "GCP", "0")


def test_tree_filter_is_recursive(qtmodeltester):
    model = MachineTreeModel()
    model.set_roots(build_tree(SPEC))
    proxy = TreeFilterProxy()
    proxy.setSourceModel(model)
    proxy.setFilterFixedString("zIIP")
    assert dump(proxy) == ["CEC1", "  LPAR1", "    zIIP", "      CPU 2"]
    qtmodeltester.check(proxy)


def test_partition_only_is_grey():
    roots = build_tree("CEC1;LPAR1")
    roots[0].children.append(TreeNode(("lpar", "CEC1", "CF01"), "lpar", "CF01", [],
                                      {"partition_only": True, "busy": 24.0, "busy_pct": 12.0, "weight": 30}))
    model = MachineTreeModel()
    model.set_roots(roots)
    idx = model.index_of_key(("lpar", "CEC1", "CF01"))
    assert model.data(idx, Qt.ItemDataRole.ForegroundRole) is not None
    # Busy in LPARCPU's unit (sum over the 2 CPUs, not the per-CPU 12.0); the weight is in the tooltip
    assert model.data(model.index(idx.row(), 2, idx.parent())) == "24.0"
    tip = model.data(idx, Qt.ItemDataRole.ToolTipRole)
    assert "Weight: 30" in tip and "no counters" in tip.lower()


def test_tree_tooltips_and_header_say_units():
    roots = build_tree("CEC1;LPAR1;GCP;0")
    lpar = roots[0].children[0]
    lpar.info.update(busy=1302.1592133012018, cpi=2.345678, capped=False, weight=30.0)
    model = MachineTreeModel()
    model.set_roots(roots)
    tip = model.data(model.index_of_key(tuple(lpar.key)), Qt.ItemDataRole.ToolTipRole)
    # one rounding per metric (Busy 1 decimal, CPI 2), yes/no for flags, no raw Python values
    assert "Busy: 1302.2 % of one CPU" in tip and "CPI: 2.35" in tip and "Capped: no" in tip
    assert "1302.159" not in tip and "False" not in tip and "30.0" not in tip
    header_tip = model.headerData(2, Qt.Orientation.Horizontal, Qt.ItemDataRole.ToolTipRole)
    assert "% of one CPU, summed over" in header_tip
    # values over a time window replace the whole-range ones; a node without intervals in it shows empty
    model.set_values({tuple(lpar.key): {"busy": 50.04, "cpi": 1.5}}, windowed=True)
    assert model.data(model.index_of_key(tuple(lpar.key)).siblingAtColumn(2)) == "50.0"
    cpu_key = tuple(lpar.children[0].children[0].key)
    assert model.data(model.index_of_key(cpu_key).siblingAtColumn(2)) == ""


def test_real_tree_modeltester(qtmodeltester, loaded):
    qtmodeltester.check(loaded.tree.model)
    qtmodeltester.check(loaded.tree.proxy)


def test_table_model_modeltester(qtmodeltester, loaded):
    qtmodeltester.check(loaded.table.model)
    model = IntervalTableModel()
    qtmodeltester.check(model)
    df = pd.DataFrame({"system": ["A", "A"], "lpar": ["A", "A"], "interval_end": pd.to_datetime(["2026-01-01",
                       "2026-01-02"]), "CPI": [1.234, float("nan")], "quality": ["", "lost"],
                       "_summary": [False, False], "_by": ["lpar_interval"] * 2})
    model.set_frame(df, [*FROZEN, ColDef("CPI", "CPI", 2)])
    qtmodeltester.check(model)
    assert model.data(model.index(0, 4)) == "1.23"
    assert model.data(model.index(1, 4)) == ""  # NaN shows empty, never 0


def test_findings_model_and_filters(qtmodeltester):
    fs = [make_finding("a.smf", 16, "error", "bad-rdw", "RDW length 0", "stops reading", system="SYSA"),
          make_finding("b.smf", None, "warning", "reset", "counter reset", ""),
          make_finding("a.smf", 255, "info", "other", "other records skipped", "")]
    model = FindingsModel()
    model.set_findings(fs)
    proxy = FindingsProxy()
    proxy.setSourceModel(model)
    qtmodeltester.check(model)
    qtmodeltester.check(proxy)
    assert model.data(model.index(2, COL_OFFSET)) == "255 (0xFF)"
    assert model.data(model.index(2, COL_OFFSET), Role.SORT) == 255
    assert model.data(model.index(1, COL_OFFSET), Role.SORT) == -1
    assert model.data(model.index(0, COL_MESSAGE)).startswith("RDW length 0")
    assert model.data(model.index(0, COL_MESSAGE), Qt.ItemDataRole.ToolTipRole).startswith("a.smf: offset 16 (0x10)")
    assert model.data(model.index(0, COL_FILE), Qt.ItemDataRole.ToolTipRole) == "a.smf"
    proxy.set_filter("a.smf", None)
    assert proxy.rowCount() == 2
    proxy.set_filter("a.smf", "error")
    assert proxy.rowCount() == 1
