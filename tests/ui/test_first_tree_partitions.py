"""Issue 23 (session 15): the first table of a load with more files still to read (the start's demo) comes with a
tree built without the partition data (the MONWRITE file's D0R16: partition-only LPARs, weights); the next job's
tree is whole, so once idle the tree is exactly the engine's.  A single file, or a load whose other reads were
cancelled, still ends with the whole tree."""

from __future__ import annotations

from pathlib import Path

from tests.ui.conftest import wait_loaded

VMPROD = ("lpar", "3931-123F5", "VMPROD")   # the z/VM LPAR of the MONWRITE sample (README "sample"), sorted first


def _roots_shown(window, monkeypatch) -> list[list]:
    """Every non-empty list of roots the tree is given, as it is given."""
    shown: list[list] = []
    real = window.tree.set_roots

    def spy(roots, *a, **k):
        if roots:
            shown.append(list(roots))
        return real(roots, *a, **k)
    monkeypatch.setattr(window.tree, "set_roots", spy)
    return shown


def _partition_only(roots) -> set[tuple]:
    return {tuple(n.key) for cec in roots for n in cec.children if (n.info or {}).get("partition_only")}


def _keys(nodes) -> list[tuple]:
    out: list[tuple] = []
    stack = list(nodes)
    while stack:
        n = stack.pop(0)
        out.append(tuple(n.key))
        stack[:0] = list(n.children or [])
    return out


def _whole_tree_on_screen(window) -> None:
    """What the tree shows once idle is the engine's whole tree: every node (partition-only LPARs included)."""
    engine = window.ws.tree()
    assert _partition_only(engine)                        # the MONWRITE sample's D0R16 has partition-only LPARs
    shown = [tuple(n.key) for n in window.tree.model.all_nodes()]
    assert sorted(shown) == sorted(_keys(engine))


def test_first_table_before_the_partition_data_and_the_whole_tree_after(qtbot, window, monwrite, smf_b,
                                                                         monkeypatch):
    shown = _roots_shown(window, monkeypatch)
    first: dict = {}

    def on_rows() -> None:
        if window.table.model.rowCount() and not first:
            first.update(files=len(window.ws.files), roots=list(shown))
    window.table.model.modelReset.connect(on_rows)
    window.open_files([monwrite, smf_b])
    wait_loaded(qtbot, window)
    assert first["files"] == 1                            # the table came before the second file was added
    assert len(first["roots"]) == 1 and not _partition_only(first["roots"][0])   # its tree: no partition data
    assert window.selection.value.nodes == (VMPROD,)      # the first LPAR with counters, as with the whole tree
    assert len(shown) >= 2 and _partition_only(shown[-1])
    _whole_tree_on_screen(window)
    assert window.errors == []


def test_a_single_file_gets_its_whole_tree_with_its_first_table(qtbot, window, monwrite, monkeypatch):
    shown = _roots_shown(window, monkeypatch)
    window.open_files([monwrite])
    wait_loaded(qtbot, window)
    assert shown and _partition_only(shown[0])            # nothing else coming: no partial tree
    _whole_tree_on_screen(window)


def test_the_whole_tree_comes_when_the_other_reads_are_cancelled(qtbot, window, monwrite, smf_b, monkeypatch):
    shown = _roots_shown(window, monkeypatch)
    other = str(Path(smf_b).resolve())

    def on_rows() -> None:       # the first table is set: the held read of the second file is cancelled
        if window.table.model.rowCount() and other in window.loader.jobs:
            window.loader.cancel(other)
    window.table.model.modelReset.connect(on_rows)
    window.open_files([monwrite, smf_b])
    wait_loaded(qtbot, window)
    assert len(window.ws.files) == 1                      # the second file was never added
    assert not _partition_only(shown[0]) and _partition_only(shown[-1])
    _whole_tree_on_screen(window)
    assert window.errors == []
