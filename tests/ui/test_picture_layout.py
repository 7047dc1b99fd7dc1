"""Pictures of the timeline panel (issue 25): at 1024x700 with four class nodes no plot collapses, no two value
axis labels or tick labels overlap, and time axes show one level of ticks (day ticks on a month)."""

from __future__ import annotations

import datetime as dt

import pytest
from PySide6.QtGui import QFont, QFontMetricsF

from app.ui.timeline_axes import UtcDateAxis, fitted_label, own_ticks
from tests.ui.conftest import wait_loaded

DAY = 86400
NOV1 = dt.datetime(2026, 11, 1, tzinfo=dt.UTC).timestamp()


def _labels_apart(values, strings, lo, hi, size, font) -> bool:
    """Every two neighbouring tick labels (centred on their ticks) leave at least 4 px between them."""
    fm = QFontMetricsF(font)
    xs = [(v - lo) / (hi - lo) * size for v in values]
    return all(b - a >= (fm.horizontalAdvance(sa) + fm.horizontalAdvance(sb)) / 2 + 4
               for a, b, sa, sb in zip(xs, xs[1:], strings, strings[1:]))


@pytest.mark.parametrize("days,size", [(30, 900), (30, 500), (31, 1400), (2, 1024), (2, 400), (7, 700), (90, 1024)])
def test_time_ticks_one_level_never_collide(qtbot, days, size):
    axis = UtcDateAxis("bottom")
    lo, hi = NOV1 + 3600, NOV1 + days * DAY
    levels = axis.tickValues(lo, hi, size)
    assert len(levels) == 1                                   # one level: no "Nov 2026" over "Nov 03"
    step, values = levels[0]
    strings = axis.tickStrings(values, 1.0, step)
    assert len(values) >= 3
    font = QFont()
    font.setPointSizeF(8)
    assert _labels_apart(values, strings, lo, hi, size, font)
    if days >= 7:                                             # a month shows day ticks with the month's name
        assert step % DAY == 0 and step <= 14 * DAY
        assert all(len(s) == 6 and s[:3] in ("Nov", "Dec", "Jan") for s in strings)
    if step == 7 * DAY:
        assert all(dt.datetime.fromtimestamp(v, dt.UTC).weekday() == 0 for v in values)   # weeks from Monday


def test_own_ticks_leave_short_and_long_spans_to_pyqtgraph():
    assert own_ticks(NOV1, NOV1 + 3600, 800) is None          # under 6 hours: minutes
    assert own_ticks(NOV1, NOV1 + 400 * DAY, 800) is None     # over 120 days: months and years
    (step, values), = own_ticks(NOV1, NOV1 + 30 * DAY, 900)
    # 30 days on 900 px leave 14 labels of 64 px: the smallest whole-day step with at most 14 ticks is 3 days
    assert step == 3 * DAY and values[0] == NOV1 + 3 * DAY - (NOV1 % (3 * DAY)) % (3 * DAY) or values[0] >= NOV1


def test_value_axis_label_fits_its_axis():
    width = {"% of L1 misses": 70.0, "%": 8.0}.get
    assert fitted_label("% of L1 misses", 120, width) == "% of L1 misses"
    assert fitted_label("% of L1 misses", 50, width) == "%"
    assert fitted_label("% of L1 misses", 10, width) == ""


def test_four_class_nodes_at_1024x700(qtbot, window, smf_a, smf_b):
    from app.ui import plot_export
    from app.ui.timeline_axes import label_width

    window.open_files([smf_a, smf_b])
    wait_loaded(qtbot, window)
    keys = [tuple(n.key) for n in window.tree.model.all_nodes() if n.level == "class"
            and str(n.key[2]) in ("ZOSA", "ZOSB")]
    assert len(keys) == 4
    window.tree.select_keys(keys)
    qtbot.waitUntil(lambda: set(window.selection.value.nodes) == set(keys))
    wait_loaded(qtbot, window)
    tl = window.timeline
    window.tabs.setCurrentWidget(tl)
    tl.ensure_drawn()
    seen = {}

    real = plot_export._central_at

    def checking(view, size):
        cm = real(view, size)

        class Wrap:
            def __enter__(self):
                cm.__enter__()
                plots = [p for p in tl._shown_plots() if p.isVisible()]
                seen["heights"] = [p.getViewBox().size().height() for p in plots]
                seen["labels"] = []
                for p in plots:
                    ax = p.getAxis("left")
                    ax.resizeEvent()
                    seen["labels"].append((ax.labelText, label_width(ax.label, ax.labelText) if ax.labelText
                                           else 0.0, ax.size().height()))
                return self

            def __exit__(self, *exc):
                return cm.__exit__(*exc)
        return Wrap()

    plot_export._central_at = checking
    try:
        image = plot_export.render_image(tl.glw, (1024, 700))
    finally:
        plot_export._central_at = real
    assert image.width() == 1024 and image.height() == 700
    heights = seen["heights"]
    assert len(heights) == 7                       # CPI, L1MP, 4 sourcing plots, LPARCPU
    assert min(heights) >= 30                      # no plot collapses (was 12 px for CPI before)
    assert max(heights) - min(heights) <= 10       # the data areas about equal (a legend may wrap at the new width)
    for text, width, axis_h in seen["labels"]:
        assert width <= axis_h - 4, text           # vertical labels never run into the next plot's


def test_crosshair_left_out_of_pictures(qtbot, window, smf_a):
    """The mouse's crosshair is on screen, not in a picture: the picture with the crosshair at a spot equals the
    picture with it off the data, and the line is shown again afterwards."""
    from app.ui import plot_export

    window.open_files([smf_a])
    wait_loaded(qtbot, window)
    tl = window.timeline
    window.tabs.setCurrentWidget(tl)
    tl.ensure_drawn()
    assert tl.vlines
    lo, hi = tl.data_range()
    plot = tl.plots["cpi"]
    tl.show_cursor_at(lo)
    off = plot_export.render_image(plot, (800, 400))
    tl.show_cursor_at((lo + hi) / 2)
    on = plot_export.render_image(plot, (800, 400))
    assert on == off
    assert tl.vlines["cpi"].isVisible()           # shown again on screen
