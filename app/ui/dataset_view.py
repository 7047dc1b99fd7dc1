"""File > Open Dataset: a window over a fleet dataset (``nestscope extract``), computed by DuckDB.

The tree of CECs and LPARs comes from the manifest (one entry per source file) and a DuckDB query of the
intervals table; the table and the timeline show the selected nodes for the chosen period, with monthly or
daily points for long ranges and intervals when the range is short, all computed by
:func:`app.dataset.query.run_query` (SQL group-bys), so years of data never enter one pandas frame.

Kept apart from the file workspace: its own window, its own DuckDB engine; :func:`install` adds the one
menu action to the main window.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from PySide6.QtCore import QAbstractTableModel, QCoreApplication, QDate, QModelIndex, Qt
from PySide6.QtGui import QAction, QStandardItem, QStandardItemModel
from PySide6.QtWidgets import (QComboBox, QDateEdit, QFileDialog, QHBoxLayout, QLabel, QMainWindow, QMessageBox,
                               QSplitter, QTableView, QTreeView, QVBoxLayout, QWidget)

from app.dataset import Dataset, DatasetError
from app.dataset.query import QuerySpec, open_engine, run_query
from app.ui.workers import SerialRunner, thread_pool

__all__ = ["DatasetWindow", "install", "open_dataset", "auto_points"]

NODE_ROLE = Qt.ItemDataRole.UserRole + 1
POINTS = ("auto", "month", "day", "interval")
PLOT_METRICS = ("CPI", "LPARCPU", "L1MP", "RNI", "Est_Finite_CPI", "PRBSTATE", "Eff_GHz")
TABLE_COLUMNS = ["cec", "lpar", "class", "period", "interval_end", "n_cpus", "CPI", "PRBSTATE", "L1MP", "L2P", "L3P",
                 "L4LP", "L4RP", "MEMP", "RNI", "Est_Finite_CPI", "LPARCPU", "Eff_GHz", "Workload_Hint", "generation"]


def auto_points(start: pd.Timestamp, end: pd.Timestamp) -> str:
    """Points for a range: months beyond ~2 months, days beyond 3 days, intervals below."""
    span = end - start
    if span > pd.Timedelta(days=62):
        return "month"
    if span > pd.Timedelta(days=3):
        return "day"
    return "interval"


class FrameModel(QAbstractTableModel):
    """Read-only table over a (small, aggregated) metrics frame."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.frame = pd.DataFrame()

    def set_frame(self, df: pd.DataFrame) -> None:
        self.beginResetModel()
        self.frame = df.reset_index(drop=True)
        self.endResetModel()

    def rowCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else len(self.frame)

    def columnCount(self, parent=QModelIndex()):
        return 0 if parent.isValid() else len(self.frame.columns)

    def data(self, index, role=Qt.ItemDataRole.DisplayRole):
        if role not in (Qt.ItemDataRole.DisplayRole, Qt.ItemDataRole.TextAlignmentRole) or not index.isValid():
            return None
        v = self.frame.iat[index.row(), index.column()]
        if role == Qt.ItemDataRole.TextAlignmentRole:
            return int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter) if isinstance(v, (float, np.floating)) \
                else None
        if v is None or (isinstance(v, float) and not np.isfinite(v)):
            return "-"
        if isinstance(v, pd.Timestamp):
            return v.strftime("%Y-%m-%d %H:%M")
        if isinstance(v, (float, np.floating)):
            return f"{v:.2f}"
        return str(v)

    def headerData(self, section, orientation, role=Qt.ItemDataRole.DisplayRole):
        if role == Qt.ItemDataRole.DisplayRole and orientation == Qt.Orientation.Horizontal:
            return str(self.frame.columns[section])
        return None


class DatasetWindow(QMainWindow):
    """Tree of CECs/LPARs, period controls, metric table and timeline of a dataset."""

    def __init__(self, root: str | Path, parent=None):
        super().__init__(parent)
        self.ds = Dataset(root)
        self.setWindowTitle(f"NestScope dataset - {self.ds.root}")
        files = self.ds.parts("intervals")
        self.engine = open_engine("duckdb", files) if files else None
        self.result = pd.DataFrame()

        self.tree_model = QStandardItemModel(self)
        self.tree_model.setHorizontalHeaderLabels(["CEC / LPAR", "files", "from", "to"])
        self.tree = QTreeView()
        self.tree.setModel(self.tree_model)
        self.tree.setSelectionMode(QTreeView.SelectionMode.ExtendedSelection)
        self.points = QComboBox()
        self.points.addItems(POINTS)
        self.metric_box = QComboBox()
        self.metric_box.addItems(PLOT_METRICS)
        self.from_edit = QDateEdit()
        self.to_edit = QDateEdit()
        for e in (self.from_edit, self.to_edit):
            e.setCalendarPopup(True)
            e.setDisplayFormat("yyyy-MM-dd")
        self.status = QLabel()
        self.table_model = FrameModel(self)
        self.table = QTableView()
        self.table.setModel(self.table_model)
        import pyqtgraph as pg

        self.plot = pg.PlotWidget(axisItems={"bottom": pg.DateAxisItem()})
        self.plot.addLegend()
        self.plot.showGrid(x=True, y=True, alpha=0.3)

        controls = QHBoxLayout()
        for label, w in (("From", self.from_edit), ("To", self.to_edit), ("Points", self.points),
                         ("Timeline", self.metric_box)):
            controls.addWidget(QLabel(label))
            controls.addWidget(w)
        controls.addStretch(1)
        right = QWidget()
        lay = QVBoxLayout(right)
        lay.addLayout(controls)
        vsplit = QSplitter(Qt.Orientation.Vertical)
        vsplit.addWidget(self.table)
        vsplit.addWidget(self.plot)
        lay.addWidget(vsplit, 1)
        lay.addWidget(self.status)
        split = QSplitter()
        split.addWidget(self.tree)
        split.addWidget(right)
        split.setStretchFactor(1, 1)
        self.setCentralWidget(split)
        self.resize(1280, 800)

        # queries run off the GUI thread, one at a time (the DuckDB connection is never shared by two threads);
        # while one runs, only the latest request waits
        self.runner = SerialRunner(self)
        self.runner.done.connect(self._show)
        self.runner.failed.connect(lambda text, _details: self.status.setText(f"query failed: {text}"))
        self._fill_tree()
        self.tree.selectionModel().selectionChanged.connect(lambda *_: self.refresh())
        self.points.currentIndexChanged.connect(lambda *_: self.refresh())
        self.metric_box.currentIndexChanged.connect(lambda *_: self._plot())
        self.from_edit.dateChanged.connect(lambda *_: self.refresh())
        self.to_edit.dateChanged.connect(lambda *_: self.refresh())
        first = self.tree_model.index(0, 0)
        if first.isValid():
            self.tree.selectionModel().select(first, self.tree.selectionModel().SelectionFlag.Select
                                              | self.tree.selectionModel().SelectionFlag.Rows)
        else:
            self.status.setText("The dataset holds no intervals yet (nestscope extract FILE... --to DATASET).")

    # -- tree ------------------------------------------------------------------------
    def _fill_tree(self) -> None:
        systems = self.ds.systems()
        counts = {}
        if self.engine is not None:       # CPU-intervals per LPAR, from the data itself
            q = self.engine.dialect.q
            c = self.engine.sql(f"SELECT {q('cec')} AS cec, {q('lpar')} AS lpar, COUNT(*) AS n, MIN(t_end) AS t0, "
                                f"MAX(t_end) AS t1 FROM iv GROUP BY {q('cec')}, {q('lpar')}")
            counts = {(r.cec, r.lpar): r for r in c.itertuples(index=False)}
        t_min = t_max = None
        for cec, g in systems.groupby("cec", sort=True):
            mt = str(g["machine_type"].iloc[0])
            ci = QStandardItem(f"{cec} ({mt})")
            ci.setData(("cec", cec), NODE_ROLE)
            row = [ci, QStandardItem(str(int(g["files"].sum()))), QStandardItem(str(g["first"].min())[:10]),
                   QStandardItem(str(g["last"].max())[:10])]
            for it in row:
                it.setEditable(False)
            for x in g.itertuples(index=False):
                li = QStandardItem(f"{x.lpar} ({x.os})")
                li.setData(("lpar", cec, x.lpar), NODE_ROLE)
                n = counts.get((cec, x.lpar))
                li.setToolTip(f"{n.n:,} CPU-intervals" if n is not None else "no intervals")
                kids = [li, QStandardItem(str(x.files)), QStandardItem(str(x.first)[:10]),
                        QStandardItem(str(x.last)[:10])]
                for it in kids:
                    it.setEditable(False)
                ci.appendRow(kids)
            self.tree_model.appendRow(row)
        for n in counts.values():
            a, b = pd.Timestamp(int(n.t0)), pd.Timestamp(int(n.t1))
            t_min = a if t_min is None or a < t_min else t_min
            t_max = b if t_max is None or b > t_max else t_max
        self.tree.expandAll()
        for col in range(4):
            self.tree.resizeColumnToContents(col)
        if t_min is not None:
            for e in (self.from_edit, self.to_edit):
                e.blockSignals(True)
            self.from_edit.setDate(QDate(t_min.year, t_min.month, t_min.day))
            end = t_max.ceil("D")
            self.to_edit.setDate(QDate(end.year, end.month, end.day))
            for e in (self.from_edit, self.to_edit):
                e.blockSignals(False)

    def selected_nodes(self) -> list[tuple]:
        rows = self.tree.selectionModel().selectedRows(0)
        return [r.data(NODE_ROLE) for r in rows if r.data(NODE_ROLE) is not None]

    # -- queries -----------------------------------------------------------------------
    def period(self) -> tuple[pd.Timestamp, pd.Timestamp]:
        f, t = self.from_edit.date(), self.to_edit.date()
        return pd.Timestamp(f.year(), f.month(), f.day()), pd.Timestamp(t.year(), t.month(), t.day())

    def spec(self) -> QuerySpec:
        nodes = self.selected_nodes()
        start, end = self.period()
        pts = self.points.currentText()
        if pts == "auto":
            pts = auto_points(start, end)
        by = "cec" if nodes and all(n[0] == "cec" for n in nodes) else "lpar"
        from app.ui import settings
        from app.ui.implausible import SETTING    # View > Keep implausible intervals of the main window

        keep = settings.get_bool(SETTING)
        if pts == "interval":
            return QuerySpec(by="interval", start=start, end=end, nodes=nodes, keep_implausible=keep)
        return QuerySpec(by=by, every=pts, start=start, end=end, nodes=nodes, keep_implausible=keep)

    def refresh(self) -> None:
        if self.engine is None:
            return
        nodes = self.selected_nodes()
        if not nodes:
            self.result = pd.DataFrame()
            self.table_model.set_frame(self.result)
            self.plot.clear()
            return
        self.status.setText("computing...")

        def make_job():                 # called on the GUI thread when the job starts: the latest selection
            spec, ds = self.spec(), self.ds
            held = [self.engine]     # released when the job ends: a finished worker must not keep DuckDB alive

            def job():
                import time
                t = time.perf_counter()
                eng = held.pop()
                try:
                    res = run_query(ds, spec, eng=eng)
                finally:
                    del eng
                # what the answer leaves out (damaged manifest entries, part files), read on this thread
                return spec, res, time.perf_counter() - t, ds.findings
            return job
        self.runner.submit(make_job)

    def _show(self, outcome) -> None:
        spec, self.result, dt, left = outcome
        cols = [c for c in TABLE_COLUMNS if c in self.result.columns]
        self.table_model.set_frame(self.result[cols])
        self.table.resizeColumnsToContents()
        what = f"per {spec.every}" if spec.every else "per interval"
        text = f"{len(self.result):,} rows {what}, level {spec.by}, computed by DuckDB in {dt:.2f} s"
        if left:
            text += f"; left out: {len(left)} damaged file(s) of the dataset (hover for which)"
        self.status.setText(text)
        self.status.setToolTip("\n".join(f.message for f in left))
        self._plot()

    def _plot(self) -> None:
        import pyqtgraph as pg

        self.plot.clear()
        m = self.metric_box.currentText()
        r = self.result
        if not len(r) or m not in r.columns:
            return
        tcol = "period" if "period" in r.columns else "interval_end"
        keys = [k for k in ("cec", "lpar", "class") if k in r.columns]
        colors = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]
        for i, (key, g) in enumerate(r.groupby(keys, sort=True)):
            x = pd.to_datetime(g[tcol]).to_numpy(dtype="datetime64[ns]").view(np.int64) / 1e9
            y = g[m].to_numpy(dtype=np.float64)
            name = " ".join(str(k) for k in (key if isinstance(key, tuple) else (key,)))
            self.plot.plot(x, y, pen=pg.mkPen(colors[i % len(colors)], width=2), name=name,
                           symbol="o" if len(x) < 60 else None, symbolSize=5, connect="finite")
        self.plot.setLabel("left", m)

    def wait(self, ms: int = 30_000) -> None:
        """Block until no query runs (tests, closing)."""
        thread_pool().waitForDone(ms)
        QCoreApplication.processEvents()

    def closeEvent(self, event) -> None:
        if self.runner.busy():
            thread_pool().waitForDone(30_000)
        if self.engine is not None:
            self.engine.close()
            self.engine = None
        super().closeEvent(event)


def open_dataset(parent=None, root: str | Path | None = None) -> DatasetWindow | None:
    """Ask for a dataset directory (unless ``root`` is given) and show its window."""
    if root is None:
        root = QFileDialog.getExistingDirectory(parent, "Open Dataset (a directory made by nestscope extract)")
        if not root:
            return None
    try:
        w = DatasetWindow(root, parent)
    except DatasetError as exc:
        QMessageBox.warning(parent, "Open Dataset", str(exc))
        return None
    w.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    w.show()
    if parent is not None:
        parent._dataset_windows = [*getattr(parent, "_dataset_windows", []), w]
    return w


def install(main_window) -> QAction:
    """Add File > Open Dataset... to the main window."""
    act = QAction("Open &Dataset...", main_window)
    act.setToolTip("Open a Parquet fleet dataset made by nestscope extract (queried with DuckDB)")
    act.triggered.connect(lambda: open_dataset(main_window))
    file_menu = main_window.menuBar().actions()[0].menu()
    acts = file_menu.actions()
    file_menu.insertAction(acts[2] if len(acts) > 2 else None, act)
    main_window.open_dataset_action = act
    return act
