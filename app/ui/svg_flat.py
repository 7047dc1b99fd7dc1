"""SVG pictures with exact coordinates: a paint device that flattens every drawing into picture pixels.

Qt's SVG generator writes each drawing in the painter's local coordinates under a ``transform``
matrix, with six significant digits.  The timelines draw in data coordinates, where x is a time in
epoch seconds (~1.8e9): six digits are ~3 hours, so curves came out as staircases.  Qt's generator
also ignores clipping, so a curve zoomed past its plot's edge was drawn over the axes.

:class:`FlatSvgDevice` sits between the painter and a :class:`QSvgGenerator`: every path, polygon,
text, image and pixmap arrives here with the painter's transform and clip, is mapped into picture
pixels (small numbers: exact to 1/1000 px at six digits) and clipped, and is drawn on the generator
with the identity transform.

>>> dev = FlatSvgDevice(gen, (1600, 900), dpi=96)
>>> painter = QPainter(dev); scene.render(painter, ...); painter.end(); dev.finish()
"""

from __future__ import annotations

import itertools
import math

from PySide6.QtCore import QPointF, QRectF, Qt
from PySide6.QtGui import (
    QBrush,
    QPaintDevice,
    QPaintEngine,
    QPainter,
    QPainterPath,
    QPainterPathStroker,
    QPen,
    QPolygonF,
    QTransform,
)

__all__ = ["FlatSvgDevice"]

_M = QPaintDevice.PaintDeviceMetric


class _FlatEngine(QPaintEngine):
    """Forwards drawings to ``target`` (a QPainter on the generator) in device coordinates, clipped."""

    def __init__(self, target: QPainter) -> None:
        super().__init__(QPaintEngine.PaintEngineFeature.AllFeatures)
        self.target = target
        self._clip: QPainterPath | None = None   # device coordinates
        self._clip_on = False
        self._tr = QTransform()

    # -- engine protocol ----------------------------------------------------------------------
    def begin(self, _device) -> bool:
        return True

    def end(self) -> bool:
        return True

    def type(self) -> QPaintEngine.Type:
        return QPaintEngine.Type.User

    def updateState(self, state) -> None:
        """Keep the clip in device coordinates, as it is set (the painter's own ``clipPath()`` maps it back to
        the logical coordinates of the moment through integer regions: data coordinates lose it)."""
        flags = state.state()
        F = QPaintEngine.DirtyFlag
        if flags & F.DirtyTransform:
            self._tr = QTransform(state.transform())   # world x view x redirection (a widget's offset)
        if flags & (F.DirtyClipPath | F.DirtyClipRegion):
            new = QPainterPath()
            if flags & F.DirtyClipPath:
                new = state.transform().map(state.clipPath())
            else:
                area = QPainterPath()
                area.addRegion(state.clipRegion())
                new = state.transform().map(area)
            op = state.clipOperation()
            if op == Qt.ClipOperation.NoClip:
                self._clip = None
            elif op == Qt.ClipOperation.IntersectClip and self._clip is not None:
                self._clip = self._clip.intersected(new)
            else:
                self._clip = new
            self._clip_on = op != Qt.ClipOperation.NoClip
        if flags & F.DirtyClipEnabled:
            self._clip_on = state.isClipEnabled()

    # -- state of the painter now -------------------------------------------------------------
    def _transform(self) -> QTransform:
        return self._tr

    def _device_clip(self) -> QPainterPath | None:
        return self._clip if self._clip_on else None

    def _pen(self, tr: QTransform) -> QPen:
        p = self.painter()
        pen = QPen(p.pen()) if p is not None else QPen()
        if pen.style() == Qt.PenStyle.NoPen:
            return pen
        width = pen.widthF()
        if not pen.isCosmetic():
            width *= math.sqrt(abs(tr.determinant())) or 1.0
        pen.setWidthF(width if width > 0 else 1.0)
        pen.setCosmetic(False)
        return pen

    def _brush(self, tr: QTransform) -> QBrush:
        p = self.painter()
        brush = QBrush(p.brush()) if p is not None else QBrush()
        if brush.style() not in (Qt.BrushStyle.NoBrush, Qt.BrushStyle.SolidPattern):
            brush.setTransform(brush.transform() * tr)
        return brush

    def _opacity(self) -> float:
        p = self.painter()
        return p.opacity() if p is not None else 1.0

    # -- drawing ------------------------------------------------------------------------------
    def drawPath(self, path: QPainterPath) -> None:
        self._draw(path, fill=True)

    def drawPolygon(self, points, count=None, mode=None) -> None:
        if mode is None:    # PySide passes (points, mode) or (points, count, mode)
            mode, count = count, None
        pts = [QPointF(pt) for pt in (points if count is None else list(points)[:count])]
        if not pts:
            return
        path = QPainterPath()
        path.addPolygon(QPolygonF(pts))
        polyline = mode == QPaintEngine.PolygonDrawMode.PolylineMode
        if not polyline:
            path.closeSubpath()
            path.setFillRule(Qt.FillRule.WindingFill if mode == QPaintEngine.PolygonDrawMode.WindingMode
                             else Qt.FillRule.OddEvenFill)
        self._draw(path, fill=not polyline)

    def _draw(self, path: QPainterPath, fill: bool) -> None:
        tr = self._transform()
        mapped = tr.map(path)
        mapped.setFillRule(path.fillRule())
        clip = self._device_clip()
        t = self.target
        t.setOpacity(self._opacity())
        pen = self._pen(tr)
        brush = self._brush(tr) if fill else QBrush()
        # with the pen's width: a straight horizontal or vertical line has an empty rectangle, which intersects nothing
        w = pen.widthF() if pen.style() != Qt.PenStyle.NoPen else 0.5
        bounds = mapped.controlPointRect().adjusted(-w, -w, w, w)
        if clip is None or clip.boundingRect().contains(bounds):
            t.setPen(pen)
            t.setBrush(brush)
            t.drawPath(mapped)
            return
        if not clip.boundingRect().intersects(bounds):
            return
        if brush.style() != Qt.BrushStyle.NoBrush:
            t.setPen(Qt.PenStyle.NoPen)
            t.setBrush(brush)
            t.drawPath(mapped.intersected(clip))
        if pen.style() == Qt.PenStyle.NoPen:
            return
        rect = _as_rect(clip)
        if rect is not None:   # the usual case (a plot's view box): the lines cut at its edges, still lines
            t.setPen(pen)
            t.setBrush(Qt.BrushStyle.NoBrush)
            t.drawPath(_clip_lines(mapped, rect))
            return
        outline = QPainterPathStroker(pen).createStroke(mapped).simplified().intersected(clip)
        t.setPen(Qt.PenStyle.NoPen)
        t.setBrush(pen.brush())
        t.drawPath(outline)

    def _clipped_in(self, rect: QRectF, tr: QTransform) -> bool:
        clip = self._device_clip()
        return clip is None or clip.boundingRect().intersects(tr.mapRect(rect))

    def drawTextItem(self, pos: QPointF, item) -> None:
        tr = self._transform()
        p = self.painter()
        t = self.target
        t.save()
        t.setTransform(tr)
        t.setOpacity(self._opacity())
        t.setFont(item.font())
        t.setPen(p.pen() if p is not None else QPen())
        t.drawText(pos, item.text())
        t.restore()

    def drawPixmap(self, rect: QRectF, pixmap, source: QRectF) -> None:
        tr = self._transform()
        if not self._clipped_in(rect, tr):
            return
        t = self.target
        t.save()
        t.setTransform(tr)
        t.setOpacity(self._opacity())
        t.drawPixmap(rect, pixmap, source)
        t.restore()

    def drawImage(self, rect: QRectF, image, source: QRectF, flags=Qt.ImageConversionFlag.AutoColor) -> None:
        tr = self._transform()
        if not self._clipped_in(rect, tr):
            return
        t = self.target
        t.save()
        t.setTransform(tr)
        t.setOpacity(self._opacity())
        t.drawImage(rect, image, source, flags)
        t.restore()


def _as_rect(path: QPainterPath) -> QRectF | None:
    """The rectangle ``path`` is, or None when it is another shape."""
    rect = path.boundingRect()
    polys = path.toFillPolygons()
    if len(polys) != 1:
        return None
    pts = {(round(p.x(), 3), round(p.y(), 3)) for p in polys[0]}
    corners = {(round(x, 3), round(y, 3)) for x in (rect.left(), rect.right()) for y in (rect.top(), rect.bottom())}
    return rect if pts <= corners else None


def _clip_segment(x0: float, y0: float, x1: float, y1: float, r: QRectF) -> tuple[float, float, float, float] | None:
    """The part of a segment inside ``r`` (Liang-Barsky), or None."""
    dx, dy = x1 - x0, y1 - y0
    lo, hi = 0.0, 1.0
    for p, q in ((-dx, x0 - r.left()), (dx, r.right() - x0), (-dy, y0 - r.top()), (dy, r.bottom() - y0)):
        if p == 0:
            if q < 0:
                return None
            continue
        u = q / p
        if p < 0:
            lo = max(lo, u)
        else:
            hi = min(hi, u)
        if lo > hi:
            return None
    return x0 + lo * dx, y0 + lo * dy, x0 + hi * dx, y0 + hi * dy


def _clip_lines(path: QPainterPath, r: QRectF) -> QPainterPath:
    """The lines of ``path`` (curves flattened) cut at the rectangle ``r``; runs stay connected."""
    out = QPainterPath()
    for poly in path.toSubpathPolygons():
        pts = [(p.x(), p.y()) for p in poly]
        last = None
        for (x0, y0), (x1, y1) in itertools.pairwise(pts):
            seg = _clip_segment(x0, y0, x1, y1, r)
            if seg is None:
                last = None
                continue
            a, b, c, d = seg
            if last is None or abs(last[0] - a) > 1e-9 or abs(last[1] - b) > 1e-9:
                out.moveTo(a, b)
            out.lineTo(c, d)
            last = (c, d)
    return out


class FlatSvgDevice(QPaintDevice):
    """A paint device of ``size`` px at ``dpi`` whose drawings go flattened to ``generator`` (see the module)."""

    def __init__(self, generator, size: tuple[int, int], dpi: int = 96) -> None:
        super().__init__()
        self._size = size
        self._dpi = int(dpi) or 96
        self._painter = QPainter(generator)
        self._engine = _FlatEngine(self._painter)

    def paintEngine(self) -> QPaintEngine:
        return self._engine

    def metric(self, m) -> int:
        w, h = self._size
        mm = 25.4 / self._dpi
        return {_M.PdmWidth: w, _M.PdmHeight: h, _M.PdmWidthMM: int(w * mm), _M.PdmHeightMM: int(h * mm),
                _M.PdmDpiX: self._dpi, _M.PdmDpiY: self._dpi, _M.PdmPhysicalDpiX: self._dpi,
                _M.PdmPhysicalDpiY: self._dpi, _M.PdmDepth: 32, _M.PdmNumColors: 2 ** 31 - 1,
                _M.PdmDevicePixelRatio: 1, _M.PdmDevicePixelRatioScaled: int(QPaintDevice.devicePixelRatioFScale()),
                }.get(m, 0)

    def finish(self) -> None:
        """End the generator's painter (writes the file)."""
        if self._painter.isActive():
            self._painter.end()
