"""Machine tree: CEC -> LPAR -> class -> logical CPU, over ``ws.tree()``.

Nodes are kept in a flat list owned by the model; an index's internal id is
the node's position + 1 (0 would be the invisible root).
"""

from __future__ import annotations

import math
import re
from typing import Any

import numpy as np
from PySide6.QtCore import QAbstractItemModel, QModelIndex, QPersistentModelIndex, QSortFilterProxyModel, Qt
from PySide6.QtGui import QColor, QFont

from app.textsafe import shown_text
from app.ui import messages as M
from app.ui.frames import fmt_number
from app.ui.palette import named
from app.ui.roles import Role

COL_NODE, COL_CPUS, COL_BUSY, COL_CPI = range(4)
Index = QModelIndex | QPersistentModelIndex


def _num(value: Any) -> float | None:
    try:
        f = float(value)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(f) else f


def node_label(node: Any) -> str:
    """The text of the Node column: the engine label plus what identifies the node."""
    info = node.info or {}
    label = str(node.label)
    extras: list[str] = []
    if node.level == "cec":
        for k in ("machine_type", "model", "serial", "generation"):
            v = info.get(k)
            if v and str(v) not in label:
                extras.append(str(v))
    elif node.level == "lpar":
        for k in ("system", "os"):
            v = info.get(k)
            if v and str(v) not in label:
                extras.append(str(v))
    elif node.level == "cpu" and not label.lower().startswith("cpu"):
        label = f"CPU {label}"
    if node.level == "cpu" and info.get("thread") is not None:     # a thread of an SMT core: "CPU 2 (t1)"
        label += f" (t{info['thread']})"
    return " · ".join([label, *extras])


class MachineTreeModel(QAbstractItemModel):
    """A read-only adapter over the TreeNode forest from the engine."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self._values: dict[tuple, dict] = {}   # node key -> busy/cpi shown (render.tree_values)
        self.loading = False                    # files are being read (CEC rows: no value yet)
        self.windowed = False                  # True: Busy and CPI are over a time window (missing = empty)
        self._set([])

    def set_values(self, values: dict[tuple, dict], windowed: bool) -> None:
        """Busy/CPI per node key over the time window (``windowed``) or overrides of the whole-range values
        (partition-only LPARs in LPARCPU's unit)."""
        self._values = dict(values)
        self.windowed = windowed
        for kids in self._kids.values():   # every level's rows: the Busy and CPI cells changed
            if kids:
                first, last = kids[0], kids[-1]
                self.dataChanged.emit(self.createIndex(self._row[first - 1], COL_BUSY, first),
                                      self.createIndex(self._row[last - 1], COL_CPI, last))

    def set_loading(self, on: bool) -> None:
        """Files are being read: a CEC's LPARs may not all be in, so its rows show no value yet (``…``)."""
        if on == self.loading:
            return
        self.loading = on
        roots = self._kids.get(0, [])
        if roots:
            self.dataChanged.emit(self.createIndex(0, COL_BUSY, roots[0]),
                                  self.createIndex(len(roots) - 1, COL_CPI, roots[-1]))

    def partial(self, node: Any) -> bool:
        """The node's value is not shown while files load (a CEC row)."""
        return self.loading and node.level == "cec"

    def value(self, node: Any, name: str) -> float | None:
        """The Busy (``busy``) or CPI (``cpi``) of ``node`` as shown."""
        key = tuple(node.key)
        if key in self._values:
            return _num(self._values[key].get(name))
        if self.windowed:
            return None
        info = node.info or {}
        return _num(info.get(name))

    def _set(self, roots: list[Any]) -> None:
        self._nodes: list[Any] = []
        self._parent: list[int] = []  # node id of the parent, 0 = root
        self._row: list[int] = []
        self._kids: dict[int, list[int]] = {0: []}
        self._by_key: dict[tuple, int] = {}
        self._append(0, roots)

    def _append(self, parent: int, nodes: list[Any]) -> None:
        """Add ``nodes`` and their subtrees as the children of node id ``parent`` (which has none yet)."""
        stack = [(parent, r, i) for i, r in reversed(list(enumerate(nodes)))]
        while stack:
            parent, node, row = stack.pop()
            self._nodes.append(node)
            nid = len(self._nodes)
            self._parent.append(parent)
            self._row.append(row)
            self._kids[parent].append(nid)
            self._kids[nid] = []
            self._by_key[tuple(node.key)] = nid
            stack.extend((nid, c, i) for i, c in reversed(list(enumerate(node.children or []))))

    def set_roots(self, roots: list[Any]) -> None:
        """Replace the whole tree.  The values shown before are dropped: new files change a CEC's busy (a CEC
        kept from before beside its new LPARs showed less than their sum), the new nodes bring their own."""
        self.beginResetModel()
        self._values = {}
        self._set(list(roots))
        self.endResetModel()

    def add_deeper(self, roots: list[Any]) -> int:
        """Insert the levels the shown tree lacks from ``roots``, the same tree built deeper (the class and CPU
        levels follow the CEC and LPAR levels, issue 11): rows are inserted under their parents, so the view
        keeps its selection, expansion and scroll position.  Returns the number of nodes inserted."""
        before = len(self._nodes)
        stack = list(roots)
        while stack:
            full = stack.pop()
            nid = self._by_key.get(tuple(full.key))
            if nid is None:
                continue
            self._nodes[nid - 1] = full      # the same node, now with its children
            kids = list(full.children or [])
            if self._kids[nid] or not kids:
                stack.extend(kids)
                continue
            parent = self.createIndex(self._row[nid - 1], 0, nid)
            self.beginInsertRows(parent, 0, len(kids) - 1)
            self._append(nid, kids)
            self.endInsertRows()
        return len(self._nodes) - before

    def depth(self) -> int:
        """Levels shown (1 = CECs only ... 4 = down to the CPUs)."""
        levels = {n.level for n in self._nodes}
        return sum(lv in levels for lv in ("cec", "lpar", "class", "cpu"))

    # -- lookups -------------------------------------------------------------------------------
    def node(self, index: Index) -> Any | None:
        if not index.isValid():
            return None
        return self._nodes[index.internalId() - 1]

    def index_of_key(self, key: tuple) -> QModelIndex:
        nid = self._by_key.get(tuple(key))
        if nid is None:
            return QModelIndex()
        return self.createIndex(self._row[nid - 1], 0, nid)

    def all_nodes(self) -> list[Any]:
        return list(self._nodes)

    # -- Qt model API --------------------------------------------------------------------------
    def index(self, row: int, column: int, parent: Index = QModelIndex()) -> QModelIndex:
        pid = parent.internalId() if parent.isValid() else 0
        if parent.isValid() and parent.column() != 0:
            return QModelIndex()
        kids = self._kids.get(pid, [])
        if not (0 <= row < len(kids) and 0 <= column < self.columnCount()):
            return QModelIndex()
        return self.createIndex(row, column, kids[row])

    def parent(self, index: Index = QModelIndex()) -> QModelIndex:  # type: ignore[override]
        if not index.isValid():
            return QModelIndex()
        pid = self._parent[index.internalId() - 1]
        if pid == 0:
            return QModelIndex()
        return self.createIndex(self._row[pid - 1], 0, pid)

    def rowCount(self, parent: Index = QModelIndex()) -> int:
        if parent.isValid() and parent.column() != 0:
            return 0
        return len(self._kids.get(parent.internalId() if parent.isValid() else 0, []))

    def columnCount(self, parent: Index = QModelIndex()) -> int:
        return len(M.TREE_HEADERS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):
        if orientation != Qt.Orientation.Horizontal or not 0 <= section < len(M.TREE_HEADERS):
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return M.TREE_HEADERS[section]
        if role == Qt.ItemDataRole.ToolTipRole:
            return M.TREE_HEADER_TIPS[section]
        return None

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole):
        node = self.node(index)
        if node is None:
            return None
        info = node.info or {}
        col = index.column()
        if role == Qt.ItemDataRole.DisplayRole:    # names from the data: control characters shown escaped
            return shown_text(self._text(node, info, col))
        if role == Role.SORT:
            return self._raw(node, info, col)
        if role == Role.NODE_KEY:
            return tuple(node.key)
        if role == Role.LEVEL:
            return node.level
        if role == Qt.ItemDataRole.TextAlignmentRole and col != COL_NODE:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
        if role == Qt.ItemDataRole.ForegroundRole and info.get("partition_only"):
            return named("muted")   # grey that stays readable on the dark theme's base too
        if role == Qt.ItemDataRole.FontRole and node.level in ("cec", "lpar") and col == COL_NODE:
            f = QFont()
            f.setBold(node.level == "cec")
            f.setItalic(bool(info.get("partition_only")))
            return f
        if role == Qt.ItemDataRole.ToolTipRole:
            return self._tooltip(node, info)
        if role == Qt.ItemDataRole.BackgroundRole and col == COL_BUSY and self._coverage(info):
            return QColor(255, 214, 102, 110)       # amber: the row's parts cover different times
        return None

    def _raw(self, node: Any, info: dict, col: int) -> Any:
        if col == COL_NODE:
            return str(node.label)
        if col == COL_CPUS:
            return _num(info.get("n_cpus"))
        if col == COL_BUSY:   # LPARCPU's unit for every row (partition-only: D0R16 busy, summed over CPUs)
            return self.value(node, "busy")
        return self.value(node, "cpi")

    def _text(self, node: Any, info: dict, col: int) -> str:
        if col == COL_NODE:
            return node_label(node)
        if col in (COL_BUSY, COL_CPI) and self.partial(node):
            return M.TREE_CEC_PENDING
        # partition-only rows: the weight is in the tooltip (keeps the Busy column narrow)
        text = fmt_number(self._raw(node, info, col), {COL_CPUS: 0, COL_BUSY: 1}.get(col, 2))
        return text + " ◔" if col == COL_BUSY and self._coverage(info) else text

    def _coverage(self, info: dict) -> bool:
        """The whole-range coverage note applies (not while Busy is over a time window)."""
        return bool(info.get("coverage_note")) and not self.windowed

    def _tooltip(self, node: Any, info: dict) -> str:
        """Formatted lines: the presentation's rounding, yes/no, no raw Python values."""
        lines = [node_label(node)]
        if self.partial(node):
            lines.append(M.TREE_CEC_PENDING_TIP)
        if node.level == "pool":
            lines.append(M.TREE_POOL_TIP)
        if self._coverage(info):
            lines.append(M.TREE_COVERAGE.format(pct=float(info.get("coverage_pct") or 0), note=info["coverage_note"]))
        if info.get("partition_only"):
            lines.append(M.TREE_PARTITION_ONLY)
        shown = {"busy": self.value(node, "busy"), "cpi": self.value(node, "cpi")}
        for k, v in [*shown.items(), *((k, v) for k, v in info.items() if k not in ("busy", "cpi"))]:
            template = M.TREE_TIP_LINES.get(k)
            if template is None or v is None or v == "" or (isinstance(v, float) and math.isnan(v)):
                continue
            lines.append(template.format(v=_tip_value(k, v)))
        return "\n".join(lines)


def _tip_value(key: str, v: Any) -> str:
    if isinstance(v, bool | np.bool_):
        return "yes" if v else "no"
    if key in ("busy", "busy_pct"):
        return fmt_number(v, 1)
    if key == "cpi":
        return fmt_number(v, 2)
    if isinstance(v, float | np.floating):
        return fmt_number(v, 0) if float(v).is_integer() else fmt_number(v, 1)
    return str(v)


class TreeFilterProxy(QSortFilterProxyModel):
    """Case-insensitive, recursive filter on the Node column; sorting by raw values (issue 26).

    Children are sorted within their parent; numbers numerically, names naturally (``CPU 2`` before ``CPU 10``);
    a node without a value (no CPI: partition-only LPARs) is last in both orders, and a CEC's pool rows stay
    after its LPARs.  Sort column -1 is the engine's tree order."""

    def __init__(self, parent=None) -> None:
        super().__init__(parent)
        self.setRecursiveFilteringEnabled(True)
        self.setAutoAcceptChildRows(True)
        self.setFilterCaseSensitivity(Qt.CaseSensitivity.CaseInsensitive)
        self.setFilterKeyColumn(COL_NODE)
        self.setSortRole(Role.SORT)

    def lessThan(self, left: Index, right: Index) -> bool:  # noqa: N802 (Qt name)
        desc = self.sortOrder() == Qt.SortOrder.DescendingOrder
        ga, gb = (int(i.data(Role.LEVEL) == "pool") for i in (left, right))
        if ga != gb:                      # pools after the LPARs in both orders
            return (ga < gb) != desc
        a, b = left.data(Role.SORT), right.data(Role.SORT)
        if a is None or b is None:        # no value: last in both orders
            return a is not None if not desc else b is not None
        if isinstance(a, str) or isinstance(b, str):
            return natural_key(str(a)) < natural_key(str(b))
        return float(a) < float(b)


def natural_key(text: str) -> tuple:
    """``"CPU 10"`` after ``"CPU 2"``: runs of digits compare as numbers."""
    return tuple((0, int(p), "") if p.isdigit() else (1, 0, p.casefold()) for p in re.split(r"(\d+)", text) if p)
