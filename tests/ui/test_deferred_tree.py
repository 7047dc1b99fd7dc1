"""Issue 11: the first table comes before the tree's class and CPU levels, which follow in a later job; a
selection works on a node of those levels once it is built; selections are answered from prepared level frames."""

from __future__ import annotations

import pandas as pd

from tests.ui.conftest import wait_loaded


def _levels(w) -> set[str]:
    return {n.level for n in w.tree.model.all_nodes()}


def test_first_table_before_the_deeper_tree_levels(qtbot, window, smf_a, smf_b, monkeypatch):
    from app.ui import render

    events: list[tuple] = []
    model = window.table.model
    model.modelReset.connect(lambda: events.append(("table rows", model.rowCount(), frozenset(_levels(window))))
                             if model.rowCount() else None)
    real_values = render.tree_values

    def values(*a, **k):
        events.append(("tree values",))
        return real_values(*a, **k)
    monkeypatch.setattr(render, "tree_values", values)
    inserted: list[int] = []
    window.tree.model.rowsInserted.connect(lambda parent, first, last: inserted.append(last - first + 1))
    window.open_files([smf_a, smf_b])
    wait_loaded(qtbot, window)
    kinds = [e[0] for e in events]
    assert "table rows" in kinds and "tree values" in kinds, kinds
    first = events[kinds.index("table rows")]
    # the first table's rows are shown while the tree has its CEC and LPAR levels (and the CEC pools) only ...
    assert first[1] > 0 and first[2] == {"cec", "lpar", "pool"}, first
    # ... and before the tree's Busy/CPI values are computed
    assert kinds.index("table rows") < kinds.index("tree values"), kinds
    # then the class and CPU levels were inserted under the LPARs (no model reset: rows inserted)
    assert _levels(window) == {"cec", "lpar", "pool", "class", "cpu"}
    assert window.tree.model.depth() == 4 and inserted
    lpars = [n for n in window.tree.model.all_nodes() if n.level == "lpar" and not n.info.get("partition_only")]
    assert len(lpars) == 2 and all(n.children for n in lpars)
    # the first LPAR stays selected in the tree and in the views
    assert window.tree.selected_keys() == list(window.selection.value.nodes) == [tuple(lpars[0].key)]


def test_selecting_a_node_of_a_deferred_level(qtbot, loaded):
    w = loaded
    cpu = next(n for n in w.tree.model.all_nodes() if n.level == "cpu")
    cls = next(n for n in w.tree.model.all_nodes() if n.level == "class")
    for node in (cpu, cls):
        w.tree.select_keys([tuple(node.key)])
        wait_loaded(qtbot, w)
        assert w.selection.value.nodes == (tuple(node.key),)
        df = w.table.model.frame
        assert len(df) > 1
        assert set(df["lpar"].astype(str)) == {node.key[2]} and set(df["class"].astype(str)) == {node.key[3]}
        if node.level == "cpu":
            assert set(df["cpu"].astype(int)) == {int(node.key[4])}
    assert w.errors == []


def test_selection_answered_from_prepared_level_frames(qtbot, loaded, monkeypatch):
    """Once idle, the window has prepared every node's rows of the LPAR, class and CEC levels: a selection
    slices them (the grouped pass over the intervals is not run again) and shows the same rows."""
    import app.engine.prepared_levels as plmod
    import app.engine.workspace as wsmod
    from app.engine import Workspace

    w = loaded
    for by in ("lpar_interval", "class_interval", "cec_interval"):
        assert w.ws.prepared(by), by
    calls: list[str] = []
    real = wsmod.level_metrics
    for mod in (wsmod, plmod):     # a selection's own rows (Workspace.metrics) and the idle CPU rows (prepare_cpus)
        monkeypatch.setattr(mod, "level_metrics", lambda *a, **k: (calls.append(a[3]), real(*a, **k))[1])
    lpar = [tuple(n.key) for n in w.tree.model.all_nodes() if n.level == "lpar"][-1]
    w.tree.select_keys([lpar])
    wait_loaded(qtbot, w)
    assert w.selection.value.nodes == (lpar,)
    # the selection itself aggregated nothing; the idle window then prepared this LPAR's CPU rows (one pass of
    # the CPU level and its summary rows over the LPAR's intervals: Workspace.prepare_cpus)
    assert [c for c in calls if c not in ("cpu", "cpu_window")] == []
    assert calls in ([], ["cpu", "cpu_window"]) and (not calls or w.ws.cpus_prepared(*lpar[1:3]))
    shown = w.table.model.frame
    fresh = Workspace(cache=False)
    fresh.add_all(w.ws.files)
    want = fresh.metrics(by="lpar_interval", nodes=[lpar], summary=True)
    cols = [c for c in want.columns if c in shown.columns]
    pd.testing.assert_frame_equal(shown[cols].reset_index(drop=True), want[cols], check_exact=True)


def test_cache_writes_wait_for_the_first_table(qtbot, window, smf_a, monkeypatch):
    """The window holds the workspace cache's background writes from open_files until its first table is shown."""
    from app import cache as wc

    if not hasattr(wc, "pause_writes"):
        import pytest

        pytest.skip("no background cache writer")
    held: list[str] = []
    real = wc.pause_writes

    class Spy:
        def __init__(self):
            self.p = real()
            held.append("paused")

        def release(self):
            held.append(f"released with {window.table.model.rowCount()} table rows")
            self.p.release()
    monkeypatch.setattr(wc, "pause_writes", Spy)
    window.open_files([smf_a])
    assert held == ["paused"]
    wait_loaded(qtbot, window)
    assert len(held) == 2 and held[1] != "released with 0 table rows", held
    assert window._write_pause is None


def test_class_and_cpu_levels_before_their_parents_values(qtbot, window, smf_a, smf_b, monkeypatch):
    """Issue 23: the job after the first table inserts the class and CPU levels without the CEC, LPAR and pool
    frames (the LPAR rows have no busy yet); the job after it computes the tree's values and brings the whole
    tree's nodes: once idle the tree shows exactly ``ws.tree()``'s nodes, with every LPAR's busy.  One file (the
    month's case): several files opened in an empty window show the first file's table first and the rest's in a
    job of their own (app/ui/first_table.py), a table job that brings the levels with the LPARs' busy."""
    from app.ui import render

    events: list[tuple] = []
    real_values = render.tree_values
    monkeypatch.setattr(render, "tree_values", lambda *a, **k: (events.append(("values",)), real_values(*a, **k))[1])
    model = window.tree.model

    def inserted(*_a) -> None:
        lpars = [n for n in model.all_nodes() if n.level == "lpar"]
        # (no job runs while a view is shown: the workspace's whole-window frames can be looked at)
        frames = set(getattr(window.ws, "_wm", {}))
        events.append(("inserted", all("busy" not in n.info for n in lpars), _levels(window), frames))
    model.rowsInserted.connect(inserted)
    window.open_files([smf_a])
    wait_loaded(qtbot, window)
    kinds = [e[0] for e in events]
    assert "inserted" in kinds and "values" in kinds, kinds
    first = events[kinds.index("inserted")]
    assert first[1] is True and {"class", "cpu"} <= first[2], first      # levels in, LPARs still without busy
    assert {"class", "cpu_window"} <= first[3] and not {"cec", "lpar", "pool"} & first[3], first   # not computed
    assert kinds.index("inserted") < kinds.index("values"), kinds
    whole = {}
    stack = list(window.ws.tree())
    while stack:
        n = stack.pop()
        whole[tuple(n.key)] = n
        stack.extend(n.children)
    shown = list(model.all_nodes())
    assert {tuple(n.key) for n in shown} == set(whole)
    assert all(n is whole[tuple(n.key)] for n in shown)            # the whole tree's nodes, replaced in place
    lpars = [n for n in shown if n.level == "lpar"]
    assert lpars and all(model.value(n, "busy") is not None for n in lpars)
    assert window.errors == []
