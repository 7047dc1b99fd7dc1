"""File > Export: the workbook's CPU-interval sheet is a box of the dialog (off unless ticked, workbooks only)."""

from __future__ import annotations

import os

from tests.ui.conftest import wait_loaded
from tests.ui.test_export_ui import run_dialog


def test_cpu_sheet_box(qtbot, window, smf_a, tmp_path):
    import openpyxl

    w = window
    w.open_files([smf_a])
    wait_loaded(qtbot, w)
    dlg = w.compare.export_dialog("deck")
    box = dlg.cpu_sheet
    assert not box.isChecked()
    dlg.path.setText(str(tmp_path / "d.pptx"))
    assert not box.isEnabled()                            # a deck has no sheets
    dlg.path.setText(str(tmp_path / "d.xlsx"))
    assert box.isEnabled()
    kind, text = run_dialog(qtbot, dlg, tmp_path / "without.xlsx")
    assert kind == "ok", text
    wb = openpyxl.load_workbook(tmp_path / "without.xlsx")
    assert "CPU intervals" not in wb.sheetnames
    about = [str(c.value) for row in wb["About"].iter_rows() for c in row if c.value is not None]
    assert any(t.startswith("Sheet CPU intervals: left out") for t in about)
    box.setChecked(True)
    kind, text = run_dialog(qtbot, dlg, tmp_path / "with.xlsx")
    assert kind == "ok", text
    wb = openpyxl.load_workbook(tmp_path / "with.xlsx")
    # the z16 ZOSA sample: 2 days of 15-minute intervals x 12 logical CPUs (8 GCP + 4 zIIP), every one a row
    n = len(w.ws.metrics(by="cpu"))
    assert 2 * 96 * 12 - 12 <= n <= 2 * 96 * 12 and wb["CPU intervals"].max_row == n + 1
    shots = os.environ.get("NESTSCOPE_SHOTS")                 # screenshots of the dialog for the review
    if shots:
        for size in ((1440, 900), (1024, 700)):
            w.resize(*size)
            dlg.path.setText(str(tmp_path / "month.xlsx"))
            qtbot.wait(50)
            w.grab().save(os.path.join(shots, f"window_{size[0]}x{size[1]}.png"))
            dlg.grab().save(os.path.join(shots, f"export_dialog_{size[0]}x{size[1]}.png"))
    dlg.close()
