"""Issue 11: after an LPAR or class is selected, the idle window prepares the CPU rows of that LPAR, so that
picking one of its CPUs next is a slice; the CPU's table is the one computed for it alone."""

from __future__ import annotations

import pandas as pd

from tests.ui.conftest import wait_loaded


def test_cpus_of_the_selected_class_are_prepared_when_idle(qtbot, loaded):
    w = loaded
    node = next(n for n in w.tree.model.all_nodes() if n.level == "class" and not (n.info or {}).get("partition_only"))
    cec, lpar = node.key[1], node.key[2]
    w.tree.select_keys([tuple(node.key)])
    wait_loaded(qtbot, w)
    qtbot.waitUntil(lambda: w.ws.cpus_prepared(cec, lpar), timeout=30_000)
    cpu = next(n for n in w.tree.model.all_nodes() if n.level == "cpu" and tuple(n.key[1:4]) == tuple(node.key[1:4]))
    w.tree.select_keys([tuple(cpu.key)])
    wait_loaded(qtbot, w)
    qtbot.waitUntil(lambda: w.table.model.rowCount() > 1, timeout=30_000)
    # the rows shown are the CPU's own: the same as a workspace that never prepared anything computes
    from app.engine import Workspace

    fresh = Workspace(cache=False)
    fresh.add_all(list(w.ws.files))
    expect = fresh.metrics("cpu", nodes=[tuple(cpu.key)], summary=True)
    got = w.ws.metrics("cpu", nodes=[tuple(cpu.key)], summary=True)
    pd.testing.assert_frame_equal(got.reset_index(drop=True), expect.reset_index(drop=True))
    assert w.table.model.rowCount() == len(expect)
