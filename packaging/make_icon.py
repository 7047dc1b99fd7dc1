"""Draw NestScope's icon (nested squares: CEC > LPAR > CPU, with a rising counter line) as PNGs.

Run once when the design changes: ``.venv/bin/python packaging/make_icon.py``; the PNGs are committed
(PyInstaller turns the 256 px PNG into the .ico / .icns it needs on Windows / macOS when Pillow is there).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QPointF, QRectF, Qt  # noqa: E402
from PySide6.QtGui import QColor, QGuiApplication, QImage, QPainter, QPainterPath, QPen  # noqa: E402

OUT = Path(__file__).resolve().parent / "icons"


def draw(size: int) -> QImage:
    img = QImage(size, size, QImage.Format.Format_ARGB32)
    img.fill(Qt.GlobalColor.transparent)
    p = QPainter(img)
    p.setRenderHint(QPainter.RenderHint.Antialiasing)
    s = size / 256.0
    colors = ["#1f3a5f", "#2f6690", "#3a7ca5", "#81c3d7"]
    for i, c in enumerate(colors):                      # nested rounded squares
        m = (12 + 30 * i) * s
        p.setPen(Qt.PenStyle.NoPen)
        p.setBrush(QColor(c))
        p.drawRoundedRect(QRectF(m, m, size - 2 * m, size - 2 * m), 22 * s, 22 * s)
    path = QPainterPath(QPointF(40 * s, 190 * s))       # a counter line rising across the nest
    for x, y in ((85, 150), (120, 165), (160, 105), (200, 120), (222, 60)):
        path.lineTo(QPointF(x * s, y * s))
    pen = QPen(QColor("#f6ae2d"), 16 * s)
    pen.setCapStyle(Qt.PenCapStyle.RoundCap)
    pen.setJoinStyle(Qt.PenJoinStyle.RoundJoin)
    p.setPen(pen)
    p.setBrush(Qt.BrushStyle.NoBrush)
    p.drawPath(path)
    p.end()
    return img


def main() -> int:
    QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    OUT.mkdir(exist_ok=True)
    for size in (48, 256, 512):
        if not draw(size).save(str(OUT / f"nestscope-{size}.png"), "PNG"):
            print(f"cannot write icon {size}", file=sys.stderr)
            return 1
    print(f"icons written to {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
