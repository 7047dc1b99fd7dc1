"""Issue 21, dark mode: every text the window draws is readable in both themes, measured on rendered pixels.

The contrast of a rendered patch is WCAG's ratio ``(L1 + 0.05) / (L2 + 0.05)`` (relative luminance of sRGB) between
its background (the most common pixel colour) and the pixel that stands out most from it: a glyph's stem reaches
the text colour, so a readable text gives 3 or more (WCAG's floor for large text), an invisible one about 1.
"""

from __future__ import annotations

from collections import Counter

import pytest
from PySide6.QtCore import QPoint, QRect
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QApplication

from tests.ui.conftest import sample, wait_loaded

READABLE = 3.0


def luminance(c: QColor) -> float:
    def lin(v: float) -> float:
        v /= 255.0
        return v / 12.92 if v <= 0.03928 else ((v + 0.055) / 1.055) ** 2.4
    return 0.2126 * lin(c.red()) + 0.7152 * lin(c.green()) + 0.0722 * lin(c.blue())


def ratio(a: QColor, b: QColor) -> float:
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def contrast(img: QImage) -> float:
    """Background (commonest colour) against the pixel of highest contrast to it."""
    img = img.convertToFormat(QImage.Format.Format_RGB32)
    counts = Counter(img.pixel(x, y) for x in range(img.width()) for y in range(img.height()))
    assert counts, "empty picture"
    bg = QColor.fromRgb(counts.most_common(1)[0][0])
    return max(ratio(bg, QColor.fromRgb(p)) for p in counts)


def test_contrast_measure():
    """The measure itself: black on white 21, white on white 1 (hand values of WCAG's formula)."""
    img = QImage(20, 10, QImage.Format.Format_RGB32)
    img.fill(QColor("white"))
    assert contrast(img) == pytest.approx(1.0)
    img.setPixelColor(3, 3, QColor("black"))
    assert contrast(img) == pytest.approx(21.0)


def test_named_colours_keep_their_contrast(qapp):
    """The window's own colours (palette.NAMED) against both themes' window and base colours."""
    from app.ui.palette import NAMED, apply_palette

    for dark in (False, True):
        apply_palette(dark)
        pal = qapp.palette()
        for name, pair in NAMED.items():
            for role in (pal.ColorRole.Window, pal.ColorRole.Base):
                assert ratio(QColor(pair[dark]), pal.color(role)) >= 4.5, (name, dark, role)
    apply_palette(False)


def in_window(w, widget) -> QImage:
    """The widget as the window shows it (a translucent chip over the toolbar: grabbed alone it would be drawn
    over no background at all)."""
    return w.grab(QRect(widget.mapTo(w, QPoint(0, 0)), widget.size())).toImage()


def legend_picture(view, legend) -> QImage:
    rect = view.mapFromScene(legend.sceneBoundingRect()).boundingRect().intersected(view.rect())
    assert rect.width() > 10 and rect.height() > 5, rect
    return view.grab(rect).toImage()


@pytest.fixture
def shown(qtbot, window):
    window.open_files([sample("after_z16_ZOSA_smf113.rdw.gz"), sample("after_VMSYS1_monwrite.mondata.gz")])
    wait_loaded(qtbot, window)
    window.tabs.setCurrentWidget(window.timeline)
    qtbot.waitUntil(lambda: not window.busy() and len(window.timeline.series) > 0, timeout=60_000)
    return window


def plot_legends(w):
    tl = w.timeline
    tl.ensure_drawn()
    return [(pid, p.legend) for pid, p in tl._data_plots().items() if p.legend is not None and p.legend.items]


def test_plot_legends_readable_in_both_themes(qtbot, shown):
    w = shown
    for dark in (True, False, True):
        w.actions_.dark.setChecked(dark)
        QApplication.processEvents()
        legends = plot_legends(w)
        assert legends, "no plot legend to look at"
        for pid, legend in legends:
            c = contrast(legend_picture(w.timeline.glw, legend))
            assert c >= READABLE, (pid, dark, c)
    w.actions_.dark.setChecked(False)


def test_chip_and_tree_note_after_dark_and_back(qtbot, shown):
    w = shown
    sel = w.selection.value
    lo, hi = w.timeline.data_range()
    import pandas as pd

    w.selection.set_window(pd.Timestamp(lo + (hi - lo) / 4, unit="s"), pd.Timestamp(lo + (hi - lo) / 2, unit="s"))
    qtbot.waitUntil(lambda: not w.busy(), timeout=30_000)
    assert sel.nodes == w.selection.value.nodes
    for dark in (True, False):
        w.actions_.dark.setChecked(dark)
        QApplication.processEvents()
        for name, widget in (("chip", w.chip.label), ("note", w.tree.note)):
            c = contrast(in_window(w, widget))
            assert c >= 4.5 if name == "note" else c >= READABLE, (name, dark, c)
    # the chip's text is the palette's text colour of the theme on screen now (light: dark text)
    img = in_window(w, w.chip.label)
    assert min(luminance(QColor.fromRgb(img.pixel(x, y))) for x in range(img.width())
               for y in range(img.height())) < 0.1


def test_partition_only_rows_readable(qtbot, shown):
    w = shown
    nodes = [n for n in w.tree.model.all_nodes() if n.level == "lpar" and n.info.get("partition_only")]
    assert nodes, "the z/VM sample has partition-only LPARs"
    idx = w.tree.proxy.mapFromSource(w.tree.model.index_of_key(tuple(nodes[0].key)))
    for dark in (True, False):
        w.actions_.dark.setChecked(dark)
        QApplication.processEvents()
        w.tree.view.scrollTo(idx)
        QApplication.processEvents()
        rect: QRect = w.tree.view.visualRect(idx)
        assert rect.height() > 0
        c = contrast(w.tree.view.viewport().grab(rect.adjusted(20, 0, 0, 0)).toImage())
        assert c >= READABLE, (dark, c)
