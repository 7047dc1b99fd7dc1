"""Issue 21: every text field of the window checks what is typed inline, and nothing typed opens an error dialog.

* the Compare tab's From / To read only a full date (``08-17`` in From was read by pandas as 0001-08-17 and the
  comparison job died with OutOfBoundsDatetime in an error dialog);
* a wrong field shows a red line under the fields, and the two side boxes keep one fixed height, so the fields
  do not move under the mouse when a node text or a message appears;
* a property test types random text into every line edit of every tab (and of the Export dialog) of the real
  window with a comparison set, and asserts that no unexpected-error dialog ever opened.
"""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from PySide6.QtWidgets import QApplication, QLineEdit, QMessageBox

from tests.ui.conftest import sample, wait_loaded

Z15, Z16 = "8561-45A12", "3931-123F5"   # the sample CECs (type-serial)


# ------------------------------------------------------------------ parse_time
def test_from_field_reads_only_full_dates():
    from app.ui.compare_model import parse_time

    assert parse_time("2026-11-02 06:00", "from") == pd.Timestamp("2026-11-02 06:00", tz="UTC")
    assert parse_time("2026-11-02T06:00:30", "from") == pd.Timestamp("2026-11-02 06:00:30", tz="UTC")
    assert parse_time("  ", "from") is None
    for text in ("08-17", "now", "today", "-1", "2026", "0001-08-17", "3000-01-01", "2026-13-01"):
        with pytest.raises(ValueError, match="from"):
            parse_time(text, "from")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=30))
def test_parse_time_is_a_time_or_a_message(text):
    """Whatever is typed: None, a UTC time within the accepted years, or a ValueError naming the field."""
    from app.ui.compare_model import YEARS, parse_time

    try:
        t = parse_time(text, "after from")
    except ValueError as exc:
        assert str(exc).startswith("after from: ")
        return
    if t is None:
        assert not text.strip()
        return
    assert str(t.tz) == "UTC" and YEARS[0] <= t.year <= YEARS[1]


# ------------------------------------------------------------------ the side boxes
@pytest.fixture
def tab(qtbot):
    from app.ui.compare_tab import CompareTab

    t = CompareTab()
    qtbot.addWidget(t)
    t.resize(1024, 700)
    t.show()
    qtbot.waitExposed(t)
    return t


def test_wrong_field_shows_a_red_line_under_the_fields(tab):
    box = tab.boxes["after"]
    box.start.setText("08-17")                    # typed while the fields had moved: meant for Hours
    assert "is not a time" in box.error.text() and box.error.isVisible()
    assert "QLabel" in box.error.styleSheet() and "color" in box.error.styleSheet()
    assert box.start.property("invalid") is True and box.end.property("invalid") is False
    with pytest.raises(ValueError, match="after from"):
        box.side()
    box.start.setText("2026-11-02 06:00")
    box.end.setText("2026-11-01 00:00")           # before From
    assert "'to' must be after 'from'" in box.error.text() and box.end.property("invalid") is True
    box.end.setText("")
    box.days.setText("mon-fri,")                   # the inline check of the shift fields: the engine's message
    assert box.error.text().startswith("days:")
    box.days.setText("mon-fri")
    assert box.error.text() == "" and not any(e.property("invalid") for e in box.fields())


def test_side_boxes_keep_their_height(qtbot, tab):
    """A node text of two lines' length and a message under the fields move no field."""
    before, after = tab.boxes["before"], tab.boxes["after"]
    qtbot.waitUntil(lambda: before.height() > 0)
    heights = (before.height(), after.height())
    where = {name: [e.mapTo(tab, e.rect().topLeft()) for e in b.fields()] for name, b in tab.boxes.items()}
    long = "; ".join(f"lpar {Z15} / ZOS{i} on {Z15} (z15), 2026-11-02 00:00 .. 2026-11-09 00:00" for i in range(6))
    before.what.setText(long)                     # what set_data writes (the engine's describe())
    after.start.setText("08-17")                  # a message appears under the after fields
    QApplication.processEvents()
    assert (before.height(), after.height()) == heights
    assert {name: [e.mapTo(tab, e.rect().topLeft()) for e in b.fields()] for name, b in tab.boxes.items()} == where
    assert before.what.text() == long and before.what.toolTip() == long     # the whole text stays readable


# ------------------------------------------------------------------ no dialog, whatever is typed
TYPED = st.one_of(
    st.text(max_size=24),
    st.sampled_from(["08-17", "22-06", "mon-fri", "sat,sun", "2026-11-02 06:00", "2026-11-03", "0001-01-01",
                     "25-99", "1600x900", "0x0", "x.png", "a.xlsx", "", " ", "now", "ZOSA", "\u00e9\u00e9"]),
)


@pytest.fixture
def compared(qtbot, window):
    from tests.ui.test_compare_tab import AFTER, BEFORE, lpar_key, wait_compared

    window.open_files([sample(BEFORE), sample(AFTER)])
    wait_loaded(qtbot, window)
    window.compare.set_side("before", [lpar_key(window, Z15)])
    window.compare.set_side("after", [lpar_key(window, Z16)])
    wait_compared(qtbot, window)
    window.compare.export_dialog()     # its fields too
    return window


def error_boxes() -> list[QMessageBox]:
    return [w for w in QApplication.topLevelWidgets() if isinstance(w, QMessageBox) and w.isVisible()
            and w.icon() == QMessageBox.Icon.Critical]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(texts=st.lists(TYPED, min_size=12, max_size=12))
def test_random_text_in_every_field_opens_no_error_dialog(qtbot, compared, texts):
    w = compared
    edits = [e for e in w.findChildren(QLineEdit) if e.isEnabled()]
    edits += [e for e in w.compare.dialog.findChildren(QLineEdit) if e.isEnabled()]
    names = {e.objectName() or e.placeholderText() for e in edits}
    assert len(edits) >= 10, names     # filter, 2 x 4 side fields, export path, size, title
    for i, edit in enumerate(edits):
        edit.setFocus()
        edit.setText(texts[i % len(texts)])
        edit.editingFinished.emit()
        QApplication.processEvents()
    qtbot.waitUntil(lambda: not w.busy() and not w.compare.busy(), timeout=60_000)
    assert w.errors == [] and error_boxes() == []
    for box in w.compare.tab.boxes.values():      # what the boxes say agrees with what they would compute
        errors = box.field_errors()
        assert box.error.text() == "; ".join(errors.values())
