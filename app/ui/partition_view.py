"""The Intervals tab's page for an LPAR known only from partition data: why there are no intervals, and what
is known (busy over time, weight, capping, processor counts by type)."""

from __future__ import annotations

import html

import numpy as np
from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel, QVBoxLayout, QWidget

from app.ui import messages as M
from app.ui.frames import fmt_number
from app.ui.partition_data import PartitionFacts

COLORS = {False: ("w", "#202020", "#1f77b4"), True: ("#1e1e1e", "#e0e0e0", "#6fa8dc")}


def _by_type(d: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in d.items()) or "-"


class PartitionView(QWidget):
    """Title, explanation, facts table and the D0R16 busy plot of one partition-only LPAR."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.title = QLabel()
        f = self.title.font()
        f.setBold(True)
        f.setPointSizeF(f.pointSizeF() * 1.2)
        self.title.setFont(f)
        self.why = QLabel()
        self.why.setWordWrap(True)
        self.facts_label = QLabel()
        self.facts_label.setTextFormat(Qt.TextFormat.RichText)
        self.facts_label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self._plot = None    # the busy plot: made when first drawn (pyqtgraph is imported then, issue 23)
        self._lay = QVBoxLayout(self)
        self._lay.setContentsMargins(12, 8, 12, 8)
        self._lay.addWidget(self.title)
        self._lay.addWidget(self.why)
        self._lay.addWidget(self.facts_label)
        self.facts: PartitionFacts | None = None
        self.dark = False

    @property
    def plot(self):
        """The busy plot (a pyqtgraph PlotWidget), made on first use: the window's start does not import
        pyqtgraph for a page that is seldom shown (issue 23)."""
        if self._plot is None:
            import pyqtgraph as pg

            from app.ui.timeline_axes import SparseAxis, UtcDateAxis
            from app.ui.timeline_plots import LEFT_AXIS_WIDTH

            plot = pg.PlotWidget(axisItems={"bottom": UtcDateAxis("bottom"), "left": SparseAxis("left")})
            plot.getPlotItem().getAxis("left").setWidth(LEFT_AXIS_WIDTH)
            plot.getPlotItem().setMenuEnabled(False)
            plot.getPlotItem().showGrid(x=True, y=True, alpha=0.25)
            plot.setLabel("left", "% of one CPU", **{"font-size": "8pt"})
            plot.setLabel("bottom", M.TIME_AXIS_LABEL, **{"font-size": "8pt"})
            self._lay.addWidget(plot, 1)
            self._plot = plot
        return self._plot

    def set_facts(self, facts: PartitionFacts, source: str = "") -> None:
        self.facts = facts
        self.title.setText(M.PARTITION_ONLY_TITLE.format(lpar=facts.lpar))
        self.why.setText(M.PARTITION_ONLY_WHY.format(lpar=facts.lpar, source=source or "the z/VM file"))
        busy = (f"{fmt_number(facts.busy_mean, 1)} % of one CPU (summed over its CPUs)"
                if facts.busy_mean is not None else "not known (no busy values in the partition data)")
        when = (lambda t: "-" if t is None else t.strftime("%Y-%m-%d %H:%M"))
        self.facts_label.setText(M.PARTITION_FACTS.format(
            number=facts.lpar_number if facts.lpar_number is not None else "-",
            processors=html.escape(_by_type(facts.processors)), weights=html.escape(_by_type(facts.weights)),
            capped="yes" if facts.capped else "no", busy=busy, first=when(facts.first), last=when(facts.last)))
        self._draw()

    def _draw(self) -> None:
        if self._plot is None and self.facts is None:    # nothing to show yet: the plot is made when there is
            return
        import pyqtgraph as pg

        from app.ui.timeline_plots import epoch_seconds

        bg, fg, line = COLORS[self.dark]
        pi = self.plot.getPlotItem()
        pi.clear()
        self.plot.setBackground(bg)
        for name in ("left", "bottom"):
            pi.getAxis(name).setPen(pg.mkPen(fg))
            pi.getAxis(name).setTextPen(pg.mkPen(fg))
        facts = self.facts
        pi.setTitle(M.PARTITION_BUSY_TITLE.format(lpar=facts.lpar if facts else ""), size="9pt", color=fg)
        if facts is None or not len(facts.busy):
            return
        x = epoch_seconds(facts.busy["time"])
        y = facts.busy["busy"].to_numpy(dtype=float)
        pi.plot(x, y, pen=pg.mkPen(line, width=2), connect="finite")
        top = float(np.nanmax(y)) if np.isfinite(y).any() else 1.0
        pi.setYRange(0, top * 1.1 if top > 0 else 1.0, padding=0)

    def set_dark(self, dark: bool) -> None:
        self.dark = dark
        self._draw()
