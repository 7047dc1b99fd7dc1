"""The window's status bar elides a message too long for the room left of its permanent widgets (app/ui/
status_bar.py): an ellipsis instead of a cut mid-word, the whole message in the tooltip, elided again when the
window or a permanent widget changes width."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from PySide6.QtWidgets import QLabel, QMainWindow

from app.ui.status_bar import ElidingStatusBar

ELLIPSIS = "\u2026"
LONG = ("ascii_transfer_smf113.txt: nothing readable (resources/samples/broken/ascii_transfer_smf113.txt: offset 0 "
        "(0x0): the file looks like text: it was transferred in ASCII mode, not binary)")


def _make(width: int, summary: str = "1 of 2 files read: 1 with errors, 0 with warnings"):
    w = QMainWindow()
    bar = ElidingStatusBar(w)
    w.setStatusBar(bar)
    label = QLabel(summary)
    bar.addPermanentWidget(label)
    w.resize(width, 300)
    w.show()
    return w, bar, label


def _window(qtbot, width: int):
    w, bar, label = _make(width)
    qtbot.addWidget(w)
    qtbot.waitExposed(w)
    qtbot.waitUntil(lambda: label.geometry().left() > 0)
    return w, bar, label


@pytest.fixture(scope="module")
def shared_bar(qapp):
    """One window for the property test's examples (640 px wide, the summary on the right)."""
    w, bar, label = _make(640)
    for _ in range(200):
        if label.geometry().left() > 0:
            break
        qapp.processEvents()
    yield bar
    w.close()
    w.deleteLater()


def _fits(bar: ElidingStatusBar) -> bool:
    return bar.fontMetrics().horizontalAdvance(bar.currentMessage()) <= bar.room()


def test_a_long_message_ends_in_an_ellipsis_and_is_whole_in_the_tooltip(qtbot):
    _w, bar, label = _window(qtbot, 700)
    bar.showMessage(LONG, 60_000)
    shown = bar.currentMessage()
    assert shown.endswith(ELLIPSIS) and LONG.startswith(shown[:-1]) and _fits(bar)
    assert bar.toolTip() == LONG == bar.full_message()
    # the message stops before the summary (the room is the bar's left to the label, less the margin)
    assert bar.room() == label.geometry().left() - 12


def test_a_short_message_is_shown_as_it_is_without_a_tooltip(qtbot):
    _w, bar, _label = _window(qtbot, 700)
    bar.showMessage("Copied 3 rows", 60_000)
    assert bar.currentMessage() == "Copied 3 rows" and bar.toolTip() == ""


def test_widening_the_window_shows_more_and_a_wider_summary_less(qtbot):
    w, bar, label = _window(qtbot, 700)
    bar.showMessage(LONG, 60_000)
    narrow = bar.currentMessage()
    w.resize(2400, 300)
    qtbot.waitUntil(lambda: bar.currentMessage() != narrow)
    assert bar.currentMessage() == LONG and bar.toolTip() == ""       # it fits whole at 2,400 px
    label.setText(label.text() + " " + "x" * 300)                     # the summary takes most of the bar
    qtbot.waitUntil(lambda: bar.currentMessage() != LONG)
    assert bar.currentMessage().endswith(ELLIPSIS) and _fits(bar) and bar.toolTip() == LONG


def test_wide_permanent_widgets_never_widen_the_window(qtbot):
    """Three reads' progress widgets and a long summary beside a message: the window keeps its width (a
    QMainWindow's own status bar ignores its width; one set with setStatusBar must say so itself)."""
    w, bar, label = _window(qtbot, 700)
    for _ in range(3):
        bar.addPermanentWidget(QLabel("x" * 120))
    label.setText("2 of 3 files read: 1 with errors, 1 with warnings (ascii_transfer_smf113.txt): see Data health")
    bar.showMessage(LONG, 60_000)
    qtbot.wait(50)
    assert w.width() == 700 and w.minimumSizeHint().width() < 700


def test_a_cleared_message_leaves_no_tooltip(qtbot):
    _w, bar, _label = _window(qtbot, 500)
    bar.showMessage(LONG)
    bar.clearMessage()
    assert bar.currentMessage() == "" and bar.full_message() == "" and bar.toolTip() == ""


@settings(max_examples=60, deadline=None)
@given(text=st.text(min_size=1, max_size=400))
def test_any_message_fits_the_room_and_is_kept_whole(shared_bar, text):
    """Any text a message can carry (file names from the data, line breaks, any script): what is shown fits the
    room, is the one-line text or its start and an ellipsis, and the whole text is kept."""
    bar = shared_bar
    assert bar.room() < 600             # the summary takes its part of the 640 px
    bar.showMessage(text, 60_000)
    one = " ".join(text.split("\n"))
    shown = bar.currentMessage()
    assert bar.full_message() == text
    assert shown == one or shown.endswith(ELLIPSIS)
    assert bar.fontMetrics().horizontalAdvance(shown) <= bar.room()
    assert bar.toolTip() == ("" if shown == text else text)
