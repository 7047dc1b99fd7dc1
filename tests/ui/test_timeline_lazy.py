"""Issue 23: the Timelines tab's pyqtgraph plots are built when the tab is first shown (or when a part of them is
first asked for, as a picture export does), not with the window; rows given before are drawn then."""

from __future__ import annotations

from app.ui.timeline import LAZY, TimelineView
from tests.ui.conftest import wait_loaded


def test_the_window_is_built_and_loaded_without_the_plots(qtbot, loaded):
    tl = loaded.timeline
    assert loaded.tabs.currentWidget() is loaded.table
    assert not tl._built and not (LAZY & set(vars(tl)))          # none of the plots' parts exists
    assert tl.series and tl.data_range()[1] > tl.data_range()[0]  # the rows are there all the same
    loaded.tabs.setCurrentWidget(tl)                              # first shown: built and drawn at once
    assert tl._built and tl.draw_count == 1
    assert len(tl.plots["cpi"].listDataItems()) >= 1
    lo, hi = tl.base_vb.viewRange()[0]
    assert lo <= tl.data_range()[0] and hi >= tl.data_range()[1]  # the x range covers the data


def test_a_part_asked_for_builds_the_plots_with_the_rows_given(qtbot, loaded):
    tl = loaded.timeline
    assert not tl._built
    assert tl.plots["cpi"] is not None and tl._built and tl.draw_count == 1    # a plot asked for (a picture)
    assert not tl._stale
    tl.ensure_drawn()                  # what File > Export does before a picture of the hidden tab: drawn already
    assert tl.draw_count == 1
    assert tl.glw is tl.scroll.widget()
    assert len(tl.plots["cpi"].listDataItems()) >= 1


def test_the_window_region_works_before_the_plots_exist(qtbot, loaded):
    """The region (others connect to it) exists from the start; a window set before the build is shown after."""
    tl = loaded.timeline
    lo, hi = tl.data_range()
    mid = lo + (hi - lo) / 2
    import pandas as pd

    tl.set_window(pd.Timestamp(lo + 900, unit="s", tz="UTC"), pd.Timestamp(mid, unit="s", tz="UTC"))
    assert not tl._built
    loaded.tabs.setCurrentWidget(tl)
    assert tl.region.getRegion() == (lo + 900, mid)
    shade = tl.shades["cpi"]                                       # the CPI plot has data: shown, shaded
    assert shade.isVisible() and shade.getRegion() == (lo + 900, mid)


def test_a_view_of_its_own_builds_at_once(qtbot):
    """A TimelineView that is its own window (not inside one being built) keeps drawing at once."""
    tl = TimelineView()
    qtbot.addWidget(tl)
    import pandas as pd

    assert not tl._built
    tl.set_frame(pd.DataFrame(), loaded=False)
    assert tl._built and tl.draw_count == 1


def test_export_of_a_hidden_tab_never_shown_builds_it(qtbot, window):
    tl = window.timeline
    assert not tl._built
    tl.ensure_drawn()
    assert tl._built and tl.glw is tl.scroll.widget() and tl.plots["cpi"].scene() is tl.glw.scene()


def test_a_second_load_after_the_tab_was_shown_draws_as_before(qtbot, window, smf_a, smf_b):
    window.open_files([smf_a])
    wait_loaded(qtbot, window)
    window.tabs.setCurrentWidget(window.timeline)
    drawn = window.timeline.draw_count
    window.tabs.setCurrentWidget(window.table)
    window.open_files([smf_b])
    wait_loaded(qtbot, window)
    assert window.timeline.draw_count == drawn        # hidden: not drawn
    window.tabs.setCurrentWidget(window.timeline)
    assert window.timeline.draw_count == drawn + 1
