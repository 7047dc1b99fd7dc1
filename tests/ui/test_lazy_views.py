"""Issue 11, the window's part: a hidden timeline tab is not redrawn; the first table comes before the timeline."""

from __future__ import annotations

from tests.ui.conftest import wait_loaded


def _other_lpar(w) -> tuple:
    current = set(w.selection.value.nodes)
    keys = [tuple(n.key) for n in w.tree.model.all_nodes()
            if n.level == "lpar" and not (n.info or {}).get("partition_only") and tuple(n.key) not in current]
    assert keys, "the sample set has a second LPAR with counters"
    return keys[0]


def test_hidden_timeline_not_redrawn_until_shown(qtbot, loaded):
    w, tl = loaded, loaded.timeline
    assert w.tabs.currentWidget() is w.table            # the timeline tab is hidden
    before = tl.draw_count
    key = _other_lpar(w)
    w.tree.select_keys([key])
    wait_loaded(qtbot, w)
    qtbot.waitUntil(lambda: tl.series and tl.series[0].label.endswith(key[-1]), timeout=30_000)
    # the new rows arrived (series and data range are current) but nothing was drawn
    assert tl.draw_count == before
    assert tl.data_range()[1] > tl.data_range()[0]
    w.tree.select_keys([_other_lpar(w)])                 # and again: still no redraw while hidden
    wait_loaded(qtbot, w)
    assert tl.draw_count == before
    w.tabs.setCurrentWidget(tl)                          # shown: drawn once, at once, with the latest rows
    assert tl.draw_count == before + 1
    assert len(tl.plots["cpi"].listDataItems()) >= 1
    w.tabs.setCurrentWidget(w.table)                     # hiding and showing again draws nothing new
    w.tabs.setCurrentWidget(tl)
    assert tl.draw_count == before + 1
    key = _other_lpar(w)                                 # while shown, a selection redraws it
    w.tree.select_keys([key])
    wait_loaded(qtbot, w)
    qtbot.waitUntil(lambda: tl.draw_count == before + 2, timeout=30_000)


def test_first_table_rows_before_timeline_is_computed(qtbot, window, smf_a, monkeypatch):
    import app.ui.render as render

    events: list[tuple[str, object]] = []
    real = render.interval_frame

    def spy(ws, sel, windowed=True, summary=True):
        events.append(("compute", "table" if summary else "timeline"))
        return real(ws, sel, windowed=windowed, summary=summary)

    monkeypatch.setattr(render, "interval_frame", spy)
    model = window.table.model
    model.modelReset.connect(lambda: events.append(("table rows", model.rowCount())) if model.rowCount() else None)
    tl_set = window.timeline.set_frame
    monkeypatch.setattr(window.timeline, "set_frame",
                        lambda *a, **k: (events.append(("timeline frame", None)), tl_set(*a, **k)))
    drawn = window.timeline.draw_count   # the empty plots drawn while the window was built
    window.open_files([smf_a])
    wait_loaded(qtbot, window)
    kinds = [e[0] if e[0] != "compute" else f"compute {e[1]}" for e in events]
    assert "table rows" in kinds and "compute timeline" in kinds and "timeline frame" in kinds, kinds
    # the table's rows are in the model before the timeline's rows are even computed, then the timeline
    assert kinds.index("compute table") < kinds.index("table rows") < kinds.index("compute timeline") \
        < kinds.index("timeline frame"), kinds
    assert window.timeline.series, "the timeline got the first LPAR's rows"
    assert window.timeline.draw_count == drawn           # its tab is hidden: not drawn


def test_column_widths_from_candidate_rows_match_every_row(loaded, monkeypatch):
    """resize_columns measures a few candidate rows per column (summary, first rows, extremes, longest texts):
    the widths must equal those from measuring every row it used to look at."""
    from app.ui.frames import N_FROZEN
    from app.ui.table_view import IntervalTable

    import app.ui.table_view as tv

    monkeypatch.setattr(tv, "RESIZE_BUDGET_S", 60.0)   # no time box: every column measured both ways
    t = loaded.table
    assert t.model.rowCount() > 50
    widths = lambda: [(t.frozen if i < N_FROZEN else t.view).columnWidth(i) for i in range(t.model.columnCount())]  # noqa: E731
    t.resize_columns()
    fast = widths()
    monkeypatch.setattr(IntervalTable, "_rows_to_measure", lambda self, col, n_sum, rows: list(rows))
    t.resize_columns()
    assert widths() == fast


def test_status_counts_cached_samples_without_loading_them():
    from app.ui.window_files import sample_count as _sample_count

    class Cached:                      # the shape of app.cache.CachedReadResult before its samples are read
        _meta = {"n_samples": 368_640}

        @property
        def samples(self):
            raise AssertionError("the samples were loaded on the GUI thread")

    class Plain:
        samples = [1, 2, 3]

    assert _sample_count(Cached()) == 368_640
    assert _sample_count(Plain()) == 3
