"""File > Export and plot pictures on the real window.

The dialog runs :func:`app.export.export` through the window's SerialRunner; the files are
re-opened with their own libraries (openpyxl, python-pptx) and checked against the engine.
"""

from __future__ import annotations

import time
import xml.etree.ElementTree as ET

import pandas as pd
import pytest
from PySide6.QtGui import QGuiApplication, QImage

from tests.ui.test_compare_tab import Z15, Z16, compared, engine_row, lpar_key  # noqa: F401 (fixture)

SHOWN = 1   # plots are drawn once the window is shown


def run_dialog(qtbot, dlg, path, what: str | None = None, timeout: int = 90_000) -> tuple[str, str]:
    if what is not None:
        dlg.set_what(what)
    dlg.path.setText(str(path))
    dlg.last = ("", "")
    assert dlg.start() or dlg.last[0] == "error"
    qtbot.waitUntil(lambda: dlg.last[0] != "", timeout=timeout)
    return dlg.last


def find(sheet, text: str) -> tuple[int, int]:
    for row in sheet.iter_rows():
        for cell in row:
            if cell.value == text:
                return cell.row, cell.column
    raise AssertionError(f"{text!r} not in sheet {sheet.title}")


def check_export_action_xlsx_pptx_and_cancel(qtbot, compared, tmp_path):
    w = compared
    act = w.actions_.export
    assert act.isEnabled() and act.shortcut().toString() == "Ctrl+E"
    act.trigger()                                        # File > Export opens the dialog
    dlg = w.compare.dialog
    assert dlg.isVisible()
    assert dlg.what.currentData() == "comparison"        # opened on the Compare tab
    b, a = engine_row(w, Z15), engine_row(w, Z16)

    # XLSX of the comparison: the Compare sheet's ratio row holds CPI before / after
    out = tmp_path / "cmp.xlsx"
    kind, text = run_dialog(qtbot, dlg, out, "comparison")
    assert kind == "ok", text
    assert str(out) in text and dlg.progress.value() == 100
    import openpyxl

    wb = openpyxl.load_workbook(out)
    assert "Compare" in wb.sheetnames and "About" in wb.sheetnames
    sh = wb["Compare"]
    head_row, cpi_col = find(sh, "CPI")
    r, _ = find(sh, "ratio")
    assert r > head_row
    assert sh.cell(r, cpi_col).value == pytest.approx(b["CPI"] / a["CPI"], rel=1e-9)

    # PPTX: a deck with the comparison (python-pptx re-opens it); provenance in the notes
    deck = tmp_path / "deck.pptx"
    kind, text = run_dialog(qtbot, dlg, deck, "deck")
    assert kind == "ok", text
    from pptx import Presentation

    prs = Presentation(str(deck))
    assert len(prs.slides) >= 2
    notes = [s.notes_slide.notes_text_frame.text for s in prs.slides if s.has_notes_slide]
    assert any("SHA-256" in n or "sha256" in n.lower() for n in notes)

    # Cancel: the export is queued behind a view job and cancelled before it runs -> nothing written
    gone = tmp_path / "cancelled.xlsx"
    from app.ui.compare_jobs import _Tagged

    w.runner.submit(lambda: (lambda: time.sleep(0.8) or _Tagged(object())))   # keeps the runner busy (no-op)
    dlg.set_what("comparison")
    dlg.path.setText(str(gone))
    dlg.last = ("", "")
    assert dlg.start()
    assert dlg.cancel_button.isEnabled() and not dlg.export_button.isEnabled()
    dlg.cancel()
    qtbot.waitUntil(lambda: dlg.last[0] != "", timeout=60_000)
    assert dlg.last[0] == "cancelled"
    assert not gone.exists()
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".nestscope-")]   # no temp left
    assert dlg.export_button.isEnabled()

    # CSV of the current table: the selected node over the time window, as the engine computes it
    key = lpar_key(w, Z16)
    w.selection.set_nodes([key])
    start, end = pd.Timestamp("2026-11-02 08:00", tz="UTC"), pd.Timestamp("2026-11-02 12:00", tz="UTC")
    w.selection.set_window(start, end)
    dlg.set_level("lpar")
    kind, text = run_dialog(qtbot, dlg, tmp_path / "table.csv", "table")
    assert kind == "ok", text
    import csv

    rows = list(csv.DictReader(open(tmp_path / "table.csv", encoding="utf-8")))
    want = w.ws.metrics(by="lpar", nodes=[key], start=start, end=end)
    assert len(rows) == len(want) == 1
    assert float(rows[0]["CPI"]) == pytest.approx(float(want["CPI"].iloc[0]), rel=1e-11)   # 12 digits
    assert float(rows[0]["CPI"]) != pytest.approx(a["CPI"], rel=1e-6)    # the window, not the whole range

    # errors are one line naming the file, never a traceback
    bad = tmp_path / "no" / "such" / "folder" / "x.xlsx"
    kind, text = run_dialog(qtbot, dlg, bad, "table")
    assert kind == "error" and str(bad) in text
    kind, text = run_dialog(qtbot, dlg, tmp_path / "x.doc", "table")
    assert kind == "error" and "x.doc" in text
    assert w.errors == []


def non_background(img: QImage) -> float:
    """Share of sampled pixels that are not the background colour of the corner."""
    bg = img.pixel(2, 2)
    n = hit = 0
    for y in range(0, img.height(), 4):
        for x in range(0, img.width(), 4):
            n += 1
            hit += img.pixel(x, y) != bg
    return hit / max(n, 1)


def check_plot_pictures_png_svg_clipboard(qtbot, compared, tmp_path):
    from app.ui.plot_export import copy_picture, render_image, save_picture

    w = compared
    tl = w.timeline
    w.tabs.setCurrentWidget(tl)
    qtbot.waitUntil(lambda: tl.plots["cpi"].isVisible() if "cpi" in tl.plots else True, timeout=10_000)
    plot = next(p for p in tl._data_plots().values() if p.isVisible() and p.listDataItems())
    before_size = tl.glw.size()

    png = tmp_path / "plot.png"
    save_picture(plot, str(png), (900, 500))
    img = QImage(str(png))
    assert (img.width(), img.height()) == (900, 500)     # the chosen size
    assert non_background(img) > 0.03                    # lines, axes and text, not an empty frame
    assert tl.glw.size() == before_size                  # the window is left as it was

    svg = tmp_path / "panel.svg"
    save_picture(tl.glw, str(svg), (1200, 800))
    root = ET.parse(svg).getroot()
    assert root.get("viewBox") == "0 0 1200 800"
    text = svg.read_text()
    assert text.count("<path") + text.count("<polyline") > 20
    # the panel shows its axis title (units and time axis) as on screen
    assert "UTC" in text

    # the node legend (a label above the plots on screen) is drawn above the panel's picture
    header = w.compare.timeline_header()
    assert "ZOSA" in header
    with_legend = render_image(tl.glw, (800, 600), header=header)
    without = render_image(tl.glw, (800, 600))
    strip = with_legend.copy(0, 0, 800, 18)
    assert non_background(strip) > 0.01 and with_legend != without

    # the compare tab's charts as one picture, from the dialog
    dlg = w.compare.export_dialog("comparison")
    dlg.size.setText("1000x600")
    kind, msg = run_dialog(qtbot, dlg, tmp_path / "charts.png")
    assert kind == "ok", msg
    img = QImage(str(tmp_path / "charts.png"))
    assert (img.width(), img.height()) == (1000, 600) and non_background(img) > 0.03

    # clipboard
    got = copy_picture(w.compare.tab.wf_plot, (640, 400))
    clip = QGuiApplication.clipboard().image()
    assert (got.width(), got.height()) == (640, 400)
    assert not clip.isNull() and clip.width() == 640
    # right-click > Export on the interval table is there
    texts = [a.text() for a in w.table.body_menu().actions()]
    assert "Export..." in texts
    assert render_image(w.compare.tab.ov_view, (500, 300)).width() == 500
    assert w.errors == []


def test_export_dialog_and_pictures(qtbot, compared, tmp_path):
    """One window load (the machine is shared): the dialog's exports, then the pictures."""
    check_export_action_xlsx_pptx_and_cancel(qtbot, compared, tmp_path)
    check_plot_pictures_png_svg_clipboard(qtbot, compared, tmp_path)
