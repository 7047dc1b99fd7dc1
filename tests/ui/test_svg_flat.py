"""app/ui/svg_flat.py: SVG drawings land in picture pixels, exactly, and clipped."""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET

import pytest

SVG = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def draw(qapp, tmp_path):
    """draw(fn) -> the SVG root of a 100x100 picture that ``fn(painter)`` painted through FlatSvgDevice."""
    from PySide6.QtCore import QRect, QSize
    from PySide6.QtGui import QPainter
    from PySide6.QtSvg import QSvgGenerator

    from app.ui.svg_flat import FlatSvgDevice

    def run(fn):
        path = tmp_path / "x.svg"
        gen = QSvgGenerator()
        gen.setFileName(str(path))
        gen.setSize(QSize(100, 100))
        gen.setViewBox(QRect(0, 0, 100, 100))
        gen.setResolution(96)
        dev = FlatSvgDevice(gen, (100, 100), 96)
        p = QPainter(dev)
        try:
            fn(p)
        finally:
            p.end()
            dev.finish()
        return ET.parse(path).getroot()

    return run


def _points(root) -> list[list[tuple[float, float]]]:
    """Every path's points (picture coordinates; the groups' matrices must be the identity)."""
    out = []
    for g in root.iter(f"{SVG}g"):
        m = re.match(r"matrix\(([^)]*)\)", g.get("transform", "") or "")
        if m:
            assert [float(v) for v in m.group(1).split(",")] == [1, 0, 0, 1, 0, 0]
        for e in g.findall(f"{SVG}path"):
            nums = [float(v) for v in re.findall(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?", e.get("d", ""))]
            out.append(list(zip(nums[::2], nums[1::2])))
    return out


def test_epoch_seconds_drawn_exactly(draw):
    """A time axis: x = epoch seconds (~1.8e9) scaled to 100 px over one day. Qt's own generator writes
    1.79358e+09 (six digits: 3 hours); here the points are picture pixels to the hundredth."""
    from PySide6.QtCore import QPointF
    from PySide6.QtGui import QPainterPath, QPen, QTransform

    t0 = 1_793_577_600.0           # 2026-11-02 00:00 UTC
    day = 86_400.0

    def paint(p):
        p.setTransform(QTransform(100 / day, 0, 0, 1, -t0 * 100 / day, 0))
        p.setPen(QPen())
        path = QPainterPath(QPointF(t0 + 900, 10))   # 00:15 -> 1.0417 px
        path.lineTo(t0 + 43_200, 50)                 # 12:00 -> 50 px
        path.lineTo(t0 + 85_500, 90)                 # 23:45 -> 98.958 px
        p.drawPath(path)

    (pts,) = _points(draw(paint))
    want = [(900 / day * 100, 10), (50, 50), (85_500 / day * 100, 90)]
    assert len(pts) == 3
    for (x, y), (wx, wy) in zip(pts, want):
        assert abs(x - wx) < 0.01 and abs(y - wy) < 0.01


def test_lines_are_cut_at_a_clip_rectangle(draw):
    from PySide6.QtCore import QLineF, QRectF

    def paint(p):
        p.setClipRect(QRectF(10, 10, 80, 80))
        p.drawLine(QLineF(0, 50, 100, 50))    # horizontal: its bounding box has no height
        p.drawLine(QLineF(0, 0, 100, 100))    # diagonal through two corners

    paths = _points(draw(paint))
    assert [(10.0, 50.0), (90.0, 50.0)] in paths
    assert [(10.0, 10.0), (90.0, 90.0)] in paths


def test_lines_outside_the_clip_are_left_out_and_fills_are_cut(draw):
    from PySide6.QtCore import QLineF, QRectF
    from PySide6.QtGui import QColor

    def paint(p):
        p.setClipRect(QRectF(20, 20, 30, 30))
        p.drawLine(QLineF(0, 90, 100, 90))          # below the clip
        p.fillRect(QRectF(0, 0, 100, 100), QColor("red"))

    paths = _points(draw(paint))
    assert all(20 - 1e-6 <= x <= 50 + 1e-6 and 20 - 1e-6 <= y <= 50 + 1e-6 for pts in paths for x, y in pts)
    assert paths   # the fill, cut to the clip


def test_text_stays_text(draw):
    from PySide6.QtCore import QPointF

    root = draw(lambda p: p.drawText(QPointF(5, 50), "CPI 3.966"))
    assert ["CPI 3.966"] == ["".join(t.itertext()).strip() for t in root.iter(f"{SVG}text")]
