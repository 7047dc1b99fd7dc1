"""Issue 11: the timelines give their curves and areas new rows instead of building new items for every
selection; a redrawn plot looks exactly like one drawn fresh."""

from __future__ import annotations

import numpy as np

from tests.ui.conftest import wait_loaded


def _keys(w, level):
    return [tuple(n.key) for n in w.tree.model.all_nodes() if n.level == level and not n.info.get("partition_only")]


def _select(qtbot, w, keys):
    w.tree.select_keys(keys)
    wait_loaded(qtbot, w)


def _pixels(w) -> np.ndarray:
    from PySide6.QtGui import QImage

    img = w.timeline.glw.grab().toImage().convertToFormat(QImage.Format.Format_RGB32)
    return np.frombuffer(img.constBits(), np.uint8).reshape(img.height(), -1)[:, :img.width() * 4].copy()


def test_items_reused_and_redraw_equals_fresh_draw(qtbot, window, smf_a, smf_b):
    w = window
    w.open_files([smf_a, smf_b])
    wait_loaded(qtbot, w)
    w.tabs.setCurrentWidget(w.timeline)
    wait_loaded(qtbot, w)
    tl = w.timeline
    lpars = _keys(w, "lpar")
    assert len(lpars) == 2
    _select(qtbot, w, [lpars[0]])
    first = [id(i) for i in tl.plots["cpi"].listDataItems()]
    fills = [i for i in tl.plots["sourcing"].items if type(i).__name__ == "QGraphicsPathItem"]
    assert len(first) == 3 and fills            # CPI and its two parts; the stacked areas
    _select(qtbot, w, lpars)                    # two nodes: three more curves
    assert len(tl.plots["cpi"].listDataItems()) == 6
    assert [id(i) for i in tl.plots["cpi"].listDataItems()][:3] == first     # the same items, new rows
    _select(qtbot, w, [_keys(w, "cec")[0]])     # a CEC: one node, the stacked busy of its LPARs on top
    _select(qtbot, w, [lpars[1]])
    assert [id(i) for i in tl.plots["cpi"].listDataItems()] == first          # no curves left over
    assert tl.plots["cpi"].listDataItems()[0].yData is not None
    # a redraw after other selections looks exactly like the same selection drawn once in a new view
    redrawn = _pixels(w)
    from app.engine import Workspace
    from app.ui.main_window import MainWindow

    w2 = MainWindow(Workspace())
    qtbot.addWidget(w2)
    w2.resize(w.size())
    w2.show()
    qtbot.waitExposed(w2)
    w2.open_files([smf_a, smf_b])
    wait_loaded(qtbot, w2)
    w2.tabs.setCurrentWidget(w2.timeline)
    _select(qtbot, w2, [lpars[1]])
    fresh = _pixels(w2)
    assert redrawn.shape == fresh.shape
    assert (redrawn != fresh).sum() == 0
    w2.loader.cancel_all()
