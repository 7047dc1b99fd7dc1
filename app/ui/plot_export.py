"""Pictures of plots: PNG and SVG of one plot or of a whole plot panel at a chosen size, and to the clipboard.

A picture is the laid-out widget rendered at the chosen size, so it looks like the screen (titles,
legends, axis labels with units): the widget is resized to the target size for the time of the
rendering and put back before the event loop runs again, so the window never shows the change.

* :func:`render_image` -> QImage of a widget (a pyqtgraph ``GraphicsView``/``PlotWidget`` or any
  QWidget) or of one ``PlotItem`` of a ``GraphicsLayoutWidget`` at ``(width, height)``;
* :func:`save_picture` writes it as ``.png`` or ``.svg`` (format from the extension; atomic write
  through :func:`app.export.atomic_output`);
* :func:`copy_picture` puts the PNG on the clipboard;
* :func:`install_plot_menu` gives a pyqtgraph widget a right-click menu (save / copy picture).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from contextlib import contextmanager
from typing import Any

import pyqtgraph as pg
from PySide6.QtCore import QPoint, QRect, QRectF, QSize, Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter, QTextDocument
from PySide6.QtWidgets import QFileDialog, QGraphicsWidget, QInputDialog, QMenu, QMessageBox, QWidget

from app.export import IMAGE_FORMATS, ExportError, atomic_output

__all__ = ["render_image", "save_picture", "copy_picture", "install_plot_menu", "plot_menu", "plot_at", "parse_size",
           "DEFAULT_SIZE", "MIN_SIDE", "MAX_SIDE"]

DEFAULT_SIZE = (1600, 900)
MIN_SIDE, MAX_SIDE = 200, 8000
SIZE_KEY = "export/picture_size"


def parse_size(text: str) -> tuple[int, int] | None:
    """``"1600x900"`` -> (1600, 900); None when it is not WxH within MIN_SIDE..MAX_SIDE."""
    try:
        w, h = (int(v) for v in str(text).lower().replace(" ", "").split("x"))
    except ValueError:
        return None
    if not (MIN_SIDE <= w <= MAX_SIDE and MIN_SIDE <= h <= MAX_SIDE):
        return None
    return w, h


# ------------------------------------------------------------------ rendering
def _layout_items(plot: Any) -> list[Any]:
    """The items of the GraphicsLayout holding ``plot`` (its siblings)."""
    layout = plot.parentItem()
    lay = getattr(layout, "layout", None)
    if lay is None or not hasattr(lay, "count"):
        return []
    return [lay.itemAt(i) for i in range(lay.count())]


@contextmanager
def _alone(plot: Any):
    """Show only ``plot`` in its layout (its bottom axis on, with a label when the layout has a shared one)."""
    others = [(it, it.isVisible()) for it in _layout_items(plot) if it is not plot and hasattr(it, "setVisible")]
    bottom = plot.getAxis("bottom") if hasattr(plot, "getAxis") else None
    bottom_shown = bottom is not None and bottom.isVisible()
    label_before = None
    if bottom is not None and not bottom_shown:
        shared = next((it.getAxis("bottom") for it, vis in others if vis and hasattr(it, "getAxis")
                       and it.getAxis("bottom").isVisible() and it.getAxis("bottom").labelText), None)
        label_before = (bottom.labelText, bottom.labelUnits, bottom.label.isVisible())
        plot.showAxis("bottom", True)
        if shared is not None and not bottom.labelText:
            bottom.setLabel(shared.labelText, units=shared.labelUnits or None)
    for it, _vis in others:
        it.setVisible(False)
    # a plot whose x follows another (the timelines' time axis plot, hidden now) is aligned with it by screen
    # position, which is stale while it is hidden: the plot takes that plot's x range itself for the picture
    vb = plot.getViewBox() if hasattr(plot, "getViewBox") else None
    master = vb.linkedView(0) if vb is not None else None
    if master is not None:
        x_range = master.viewRange()[0]
        vb.setXLink(None)
        vb.setXRange(*x_range, padding=0)
    try:
        yield
    finally:
        if master is not None:
            vb.setXLink(master)
        for it, vis in others:
            it.setVisible(vis)
        if label_before is not None:
            text, units, shown = label_before
            bottom.setLabel(text or None, units=units or None)
            bottom.showLabel(shown)
            plot.showAxis("bottom", False)


@contextmanager
def _resized(widget: QWidget, size: tuple[int, int]):
    """``widget`` at ``size`` (laid out) for the time of the block, then back as it was."""
    old = widget.size()
    was_visible = widget.isVisible()
    w, h = size
    if not was_visible:
        widget.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, True)
        widget.show()
    widget.resize(w, h)
    _settle(widget)
    try:
        yield
    finally:
        widget.resize(old)
        if not was_visible:
            widget.hide()
            widget.setAttribute(Qt.WidgetAttribute.WA_DontShowOnScreen, False)
        _settle(widget)


def _settle(widget: QWidget) -> None:
    """Lay out ``widget`` now (Qt and pyqtgraph layouts) without returning to the event loop.

    Works for hidden widgets too (e.g. a plot on a tab that is not shown): their resize events are
    pending, so the pyqtgraph views are given their size here."""
    if widget.layout() is not None:
        widget.layout().activate()
    views = [widget] if isinstance(widget, pg.GraphicsView) else []
    views += widget.findChildren(pg.GraphicsView)
    for view in views:
        if view.autoPixelRange:
            pg.GraphicsView.setRange(view, QRectF(0, 0, view.width(), view.height()), padding=0,
                                     disableAutoPixel=False)
        ci = view.centralWidget
        lay = getattr(ci, "layout", None) if ci is not None else None
        if lay is not None and hasattr(lay, "activate"):
            lay.activate()


def _target(obj: Any) -> tuple[QWidget, Any]:
    """(the widget to resize, the plot to show alone or None)."""
    if isinstance(obj, pg.PlotItem):
        scene = obj.scene()
        views = scene.views() if scene is not None else []
        if not views:
            raise ExportError("the plot is not on screen")
        view = views[0]
        only = obj if _layout_items(obj) else None
        return view, only
    return obj, None


@contextmanager
def _central_at(view: pg.GraphicsView, size: tuple[int, int]):
    """The view's central item (plot or layout) laid out at ``size`` in scene coordinates, then back.

    The widget itself is not resized, so this works for views on hidden tabs too."""
    ci = view.centralWidget
    old = ci.geometry() if ci is not None else None
    squeezed = _fit_heights(ci, size[1]) if ci is not None else []
    if ci is not None:
        ci.setGeometry(QRectF(0, 0, *size))
        _activate(ci)
    try:
        yield
    finally:
        for item, low, high in squeezed:
            item.setMaximumHeight(high)
            item.setMinimumHeight(low)
        if ci is not None and old is not None:
            ci.setGeometry(old)
            _activate(ci)


MIN_SQUEEZED = 48   # px: a plot squeezed into a short picture keeps a title row and a few ticks


def _fit_heights(ci: Any, height: float) -> list[tuple[Any, float, float]]:
    """Lower the minimum heights of the layout's flexible rows (plots) so the shown rows fit ``height``
    (a panel taller than the picture would be cut at its bottom: on screen it scrolls); rows of a fixed
    height (time axis, overview) keep theirs.  Returns what to put back."""
    items = [it for it in _layout_items_of(ci) if hasattr(it, "minimumHeight") and it.isVisible()]
    fixed = [it for it in items if it.maximumHeight() <= it.minimumHeight()]
    flexible = [it for it in items if it not in fixed]
    lay = ci.layout
    spacing = lay.verticalSpacing() if hasattr(lay, "verticalSpacing") else 0
    left, top, right, bottom = lay.getContentsMargins() if hasattr(lay, "getContentsMargins") else (0, 0, 0, 0)
    room = height - sum(it.minimumHeight() for it in fixed) - max(spacing, 0) * (len(items) - 1) - top - bottom
    need = sum(it.minimumHeight() for it in flexible)
    if not flexible or need <= room:
        return []
    # every plot's data area gets the same height: a plot's rows beyond its view box (title with a legend, axes)
    # are taken as laid out now, so the rows with a legend in their title (CPI, the first sourcing plot) keep as
    # much data area as the others instead of collapsing
    frames = [_frame_height(it) for it in flexible]
    data = max(room - sum(frames), 0) / len(flexible)
    saved = []
    for it, frame in zip(flexible, frames):
        low, high = it.minimumHeight(), it.maximumHeight()
        saved.append((it, low, high))
        share = max(MIN_SQUEEZED, frame + data)
        it.setMinimumHeight(share)
        it.setMaximumHeight(share)
    return saved


def _frame_height(item: Any) -> float:
    """Height of a plot's rows around its view box (title row, legend, axes) as laid out now."""
    vb = item.getViewBox() if hasattr(item, "getViewBox") else None
    if vb is None or item.size().height() <= 0:
        return 0.0
    return max(0.0, min(item.size().height() - vb.size().height(), item.minimumHeight() * 0.6))


def _layout_items_of(ci: Any) -> list[Any]:
    lay = getattr(ci, "layout", None)
    if lay is None or not hasattr(lay, "count"):
        return []
    return [lay.itemAt(i) for i in range(lay.count())]


def _activate(item: Any) -> None:
    """Lay out ``item`` and every graphics widget inside it now (their layout requests are otherwise
    posted events: the picture would show half-updated plots)."""
    scene = item.scene()
    widgets = [item] + [i for i in (scene.items() if scene is not None else [])
                        if isinstance(i, QGraphicsWidget) and item.isAncestorOf(i)]
    for _ in range(3):   # outer layouts first set the inner widgets' sizes, then those lay out
        for wdg in sorted(widgets, key=_depth):
            lay = QGraphicsWidget.layout(wdg)
            if lay is not None:
                lay.activate()


def _depth(item: Any) -> int:
    d = 0
    while item.parentItem() is not None:
        item, d = item.parentItem(), d + 1
    return d


def _paint(obj: Any, size: tuple[int, int], painter: QPainter, header: str = "") -> None:
    """Paint ``obj`` laid out at ``size`` with ``painter`` (an image or an SVG generator).

    ``header``: rich text drawn above the plots (e.g. the timelines' node legend, which on screen is a
    label outside the plot scene)."""
    widget, only = _target(obj)
    w, h = size
    top = 0
    if header:
        doc = QTextDocument()
        doc.setDefaultFont(widget.font())
        doc.setHtml(header)
        doc.setTextWidth(w - 16)
        top = int(doc.size().height()) + 6
        painter.fillRect(QRectF(0, 0, w, top), widget.backgroundBrush() if isinstance(widget, pg.GraphicsView)
                         else widget.palette().window())
        painter.save()
        painter.translate(8, 3)
        doc.drawContents(painter)
        painter.restore()
    if isinstance(widget, pg.GraphicsView):
        area = (w, h - top)
        with _alone(only) if only is not None else _null(), _central_at(widget, area), _screen_only_hidden(widget):
            painter.fillRect(QRectF(0, top, *area), widget.backgroundBrush())
            widget.scene().render(painter, QRectF(0, top, *area), QRectF(0, 0, *area))
        return
    with _hidden(getattr(widget, "picture_controls", ())), _resized(widget, (w, h - top)), \
            _screen_only_hidden(widget):
        QWidget.render(widget, painter, QPoint(0, top))


@contextmanager
def _screen_only_hidden(widget: QWidget):
    """Items marked ``on_screen_only`` (the mouse's crosshair) in the scenes of ``widget`` hidden while it is painted
    for a picture: a picture shows the data, not where the mouse happened to be."""
    views = [widget] if isinstance(widget, pg.GraphicsView) else widget.findChildren(pg.GraphicsView)
    items = [it for v in views if v.scene() is not None for it in v.scene().items()
             if getattr(it, "on_screen_only", False) and it.isVisible()]
    for it in items:
        it.setVisible(False)
    try:
        yield
    finally:
        for it in items:
            it.setVisible(True)


@contextmanager
def _hidden(controls):
    """``controls`` (a panel's combo boxes and the like, listed in its ``picture_controls``) hidden while the panel
    is laid out and painted for a picture, then shown again: a picture holds the charts, not what chooses them."""
    shown = [c for c in controls if not c.isHidden()]
    for c in shown:
        c.hide()
    try:
        yield
    finally:
        for c in shown:
            c.show()
        for c in shown:
            if c.parentWidget() is not None:
                _settle(c.parentWidget())


def render_image(obj: Any, size: tuple[int, int] | None = None, header: str = "") -> QImage:
    """A QImage of ``obj`` (QWidget or pyqtgraph PlotItem) laid out at ``size`` (default: its size now)."""
    widget, _only = _target(obj)
    size = size or (widget.width(), widget.height())
    image = QImage(size[0], size[1], QImage.Format.Format_ARGB32)
    image.fill(widget.palette().window().color())
    painter = QPainter(image)
    try:
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, True)
        painter.setRenderHint(QPainter.RenderHint.TextAntialiasing, True)
        _paint(obj, size, painter, header)
    finally:
        painter.end()
    return image


def _render_svg(obj: Any, size: tuple[int, int], path: str, title: str, header: str = "") -> None:
    from PySide6.QtSvg import QSvgGenerator

    gen = QSvgGenerator()
    gen.setFileName(path)
    gen.setSize(QSize(*size))
    gen.setViewBox(QRect(0, 0, *size))
    gen.setTitle(title)
    gen.setDescription("NestScope plot")
    widget, _only = _target(obj)
    gen.setResolution(widget.logicalDpiX())   # point sizes as on screen (the default 72 dpi shrinks text)
    from app.ui.svg_flat import FlatSvgDevice

    # drawn through a device that maps everything to picture pixels and clips it: the generator itself writes
    # data coordinates (epoch seconds) with six digits and ignores clipping (app/ui/svg_flat.py)
    device = FlatSvgDevice(gen, size, widget.logicalDpiX())
    painter = QPainter(device)
    try:
        _paint(obj, size, painter, header)
    finally:
        painter.end()
        device.finish()


@contextmanager
def _null():
    yield


def save_picture(obj: Any, path: str, size: tuple[int, int] | None = None, title: str = "",
                 header: str = "", inputs: list[str] = ()) -> str:
    """Write a PNG or SVG picture of ``obj`` to ``path`` (format from the extension); returns the path.

    Raises :class:`app.export.ExportError` (naming the file) when the extension is not .png/.svg, the
    file cannot be written or it is one of ``inputs`` (the data files the picture shows).
    """
    path = str(path)
    ext = os.path.splitext(path)[1].lower()
    if ext not in IMAGE_FORMATS:
        raise ExportError(f"{path}: a picture is .png or .svg, not {ext or '(no extension)'!r}")
    widget, _only = _target(obj)
    size = size or (widget.width(), widget.height())
    with atomic_output(path, list(inputs)) as tmp:
        if ext == ".png":
            image = render_image(obj, size, header)
            if image.isNull() or not image.save(tmp, "PNG"):
                raise ExportError(f"{path}: the picture could not be written")
        else:
            _render_svg(obj, size, tmp, title or os.path.basename(path), header)
    return path


def copy_picture(obj: Any, size: tuple[int, int] | None = None, header: str = "") -> QImage:
    """Put a picture of ``obj`` on the clipboard; returns it."""
    image = render_image(obj, size, header)
    QGuiApplication.clipboard().setImage(image)
    return image


# ------------------------------------------------------------------ the right-click menu
def plot_at(view: pg.GraphicsView, pos: QPoint, plots: list[Any]) -> Any:
    """The visible plot of ``plots`` under the widget position ``pos`` (None when none)."""
    scene_pos = view.mapToScene(pos)
    for p in plots:
        if p.isVisible() and p.sceneBoundingRect().contains(scene_pos):
            return p
    return None


def ask_size(parent: QWidget, size: tuple[int, int] | None = None) -> tuple[int, int] | None:
    """Ask for the picture size (WxH); None when cancelled."""
    from app.ui import settings

    text = settings.get_value(SIZE_KEY, "") or "x".join(str(v) for v in (size or DEFAULT_SIZE))
    while True:
        text, ok = QInputDialog.getText(parent, "Picture size", "Width x height in pixels (e.g. 1600x900):",
                                        text=str(text))
        if not ok:
            return None
        got = parse_size(text)
        if got is not None:
            settings.set_value(SIZE_KEY, f"{got[0]}x{got[1]}")
            return got
        QMessageBox.warning(parent, "Picture size", f"{text!r} is not WxH between {MIN_SIDE} and {MAX_SIDE} pixels")


def save_dialog(parent: QWidget, obj: Any, name: str, status: Callable[[str], None] | None = None,
                header: str = "") -> str | None:
    """Ask for a file (.png/.svg) and a size, then save a picture of ``obj``; errors are shown naming the file."""
    from app.ui import settings

    folder = settings.get_value("export/dir", "") or ""
    path, _ = QFileDialog.getSaveFileName(parent, "Save picture", os.path.join(str(folder), name + ".png"),
                                          "PNG picture (*.png);;SVG picture (*.svg)")
    if not path:
        return None
    if not os.path.splitext(path)[1]:
        path += ".png"
    size = ask_size(parent)
    if size is None:
        return None
    try:
        save_picture(obj, path, size, title=name, header=header)
    except ExportError as exc:
        QMessageBox.warning(parent, "Picture not saved", str(exc))
        return None
    settings.set_value("export/dir", os.path.dirname(path))
    if status is not None:
        status(f"Picture saved to {path}")
    return path


def plot_menu(view: pg.GraphicsView, pos: QPoint, plots: list[Any], panel: Any, name: str,
              status: Callable[[str], None] | None = None, header: str = "") -> QMenu:
    """The picture menu at ``pos``: the plot under the mouse (when there is one) and the whole panel."""
    menu = QMenu(view)
    plot = plot_at(view, pos, plots)
    if plot is not None:
        title = _title(plot) or name
        menu.addAction("Export this plot as PNG/SVG...",
                       lambda: save_dialog(view, plot, _file_name(title), status, header))
        menu.addAction("Copy this plot as a picture", lambda: _copy(plot, status, header))
    menu.addAction("Export the whole panel as PNG/SVG...", lambda: save_dialog(view, panel, name, status, header))
    menu.addAction("Copy the whole panel as a picture", lambda: _copy(panel, status, header))
    return menu


def install_plot_menu(view: pg.GraphicsView, plots: Callable[[], list[Any]], panel: QWidget | None = None,
                      name: str = "plot", status: Callable[[str], None] | None = None,
                      header: Callable[[], str] | None = None) -> None:
    """Right-click on ``view``: save the plot under the mouse / the whole panel as PNG or SVG, copy it.

    ``plots()`` lists the PlotItems that can be saved alone; ``panel`` is the widget saved as the
    whole panel (default ``view``); ``header()`` gives rich text drawn above the picture (a legend
    that lives outside the plots on screen).
    """
    panel = panel or view

    def menu_at(pos: QPoint) -> None:
        menu = plot_menu(view, pos, plots(), panel, name, status, header() if header is not None else "")
        menu.exec(view.mapToGlobal(pos))

    view.setContextMenuPolicy(Qt.ContextMenuPolicy.CustomContextMenu)
    view.customContextMenuRequested.connect(menu_at)


def _copy(obj: Any, status: Callable[[str], None] | None, header: str = "") -> None:
    img = copy_picture(obj, header=header)
    if status is not None:
        status(f"Picture copied ({img.width()}x{img.height()})")


def _title(plot: Any) -> str:
    label = getattr(plot, "titleLabel", None)
    text = getattr(label, "text", "") if label is not None else ""
    import re

    return re.sub(r"<[^>]+>", "", str(text or "")).strip()


def _file_name(title: str) -> str:
    keep = "".join(c if c.isalnum() or c in "-_" else "_" for c in title).strip("_")
    while "__" in keep:
        keep = keep.replace("__", "_")
    return keep[:60] or "plot"
