"""The progressive open (issue 23): a big file's first part on screen while the whole file is read.

The files are generated with the sample writer (3 LPARs x 4 CPUs x 300 intervals of 15 minutes, about 5.5 MB):
in the writer's order (LPAR by LPAR), in time order and shuffled record by record.  The size threshold is set low
(``NESTSCOPE_PROGRESSIVE_MB``) so that these files are opened progressively.
"""

from __future__ import annotations

import datetime as dt
import threading
from pathlib import Path

import pandas as pd
import pytest
from PySide6.QtCore import QEvent, QObject
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.ui.conftest import wait_loaded

INTERVALS = 300
ORDERS = ("lpar", "time", "shuffle")


def _write(path: Path, order: str) -> None:
    from app.formats import smf113_writer
    from app.sample.build import MIX_GCP, MIX_ZIIP
    from app.sample.model import CecModel, ClassModel, LparModel, make_samples

    lpars = [LparModel(f"LP{i:02d}", f"SY{i:02d}", [ClassModel("GCP", 3, 60 + i, 3.0, 3.0, MIX_GCP),
                                                    ClassModel("zIIP", 1, 35, 2.5, 2.2, MIX_ZIIP, 85)])
             for i in range(3)]
    s, _ = make_samples(CecModel("z16", "00000000000BE7C4", lpars), dt.datetime(2026, 10, 1), INTERVALS, 900.0,
                        seed=1)
    if order == "time":
        s = s.sort_values("time", kind="stable")
    elif order == "shuffle":
        s = s.sample(frac=1.0, random_state=3)
    smf113_writer.write_smf_file(path, smf113_writer.encode_samples(s.reset_index(drop=True), 1), framing="rdw")


@pytest.fixture(scope="session")
def big_files(shared_path) -> dict[str, str]:
    def make(out: Path) -> None:
        for order in ORDERS:
            _write(out / f"{order}.smf", order)
    folder = shared_path("progressive_smf", make)
    return {order: str(folder / f"{order}.smf") for order in ORDERS}


@pytest.fixture(scope="session")
def full_ws(big_files):
    """Each file's whole read in a Workspace (what the window shows once the whole file is in)."""
    from app.engine import Workspace
    from app.formats import read_file

    out = {}
    for order, path in big_files.items():
        ws = Workspace(cache=False)
        ws.add_all([read_file(path)])
        out[order] = ws
    return out


@pytest.fixture(autouse=True)
def low_threshold(monkeypatch, tmp_path):
    monkeypatch.setenv("NESTSCOPE_PROGRESSIVE_MB", "1")
    monkeypatch.setenv("NESTSCOPE_CACHE_DIR", str(tmp_path / "cache"))    # no entry: the file is decoded


def _full_rows(ws, sel) -> pd.DataFrame:
    from app.ui.frames import SUMMARY_COL, interval_frame

    df = interval_frame(ws, sel, windowed=True, summary=True)
    return df.loc[~df[SUMMARY_COL]].reset_index(drop=True)


def _same_rows(shown: pd.DataFrame, full: pd.DataFrame) -> None:
    """Every shown row is the full table's row of the same node and interval, every column equal."""
    key = ["_by", "cec", "system", "lpar", "interval_end"]
    key = [k for k in key if k in shown.columns]
    assert not full.duplicated(key).any()
    picked = shown[key].merge(full.reset_index(), on=key, how="left")
    assert picked["index"].notna().all(), "a shown row is not in the whole file's table"
    want = full.loc[picked["index"].astype(int).to_numpy()].reset_index(drop=True)
    pd.testing.assert_frame_equal(shown.reset_index(drop=True), want[shown.columns], check_dtype=True)


def test_rest_min_time_per_system(big_files):
    """The walk of the rest finds each system's earliest sample: in the LPAR-by-LPAR file, cut after the first
    LPAR's first rows, the other systems start at the first interval's end (00:15) and the first system goes on
    where the cut is."""
    from app.formats import read_file
    from app.ui import progressive as P

    part = P.first_part(big_files["lpar"], fraction=0.1)
    assert part is not None and 0.09 < part.fraction < 0.2
    whole = read_file(big_files["lpar"]).samples
    first = pd.Timestamp("2026-10-01 00:15")
    assert part.rest_min["SY01"] == part.rest_min["SY02"] == part.rest_min[""] == first
    got = part.result.samples
    # SY00's rest starts at the first sample time of SY00 the part does not hold (records are CPU by CPU)
    rest = whole.loc[~whole.set_index(["system", "cpu", "time"]).index.isin(
        got.set_index(["system", "cpu", "time"]).index)]
    assert part.rest_min["SY00"] == rest.loc[rest["system"] == "SY00", "time"].min()


def test_small_or_unknown_files_are_read_the_usual_way(big_files, monkeypatch, tmp_path):
    from app.ui import progressive as P

    monkeypatch.setenv("NESTSCOPE_PROGRESSIVE_MB", "64")
    assert P.first_part(big_files["lpar"]) is None          # 5.5 MB < 64 MB
    monkeypatch.setenv("NESTSCOPE_PROGRESSIVE_MB", "0")
    assert P.first_part(big_files["lpar"]) is None          # turned off
    monkeypatch.setenv("NESTSCOPE_PROGRESSIVE_MB", "1")
    junk = tmp_path / "junk.bin"
    junk.write_bytes(b"\x00\x01" * (1 << 20))
    assert P.first_part(str(junk)) is None                  # not an RDW chain of SMF records
    cut = tmp_path / "cut.smf"
    cut.write_bytes(Path(big_files["time"]).read_bytes()[:-700])
    assert P.first_part(str(cut)) is None                   # the last record is cut: the reader reports it


@pytest.mark.parametrize("order", ORDERS)
def test_first_table_rows_are_the_full_loads(big_files, full_ws, order):
    """The table shown from the first part (10 % of the file) is exactly the whole file's rows of those
    intervals; in time order and LPAR by LPAR some rows are shown, shuffled none (every system still has
    samples of the first interval to come)."""
    from app.ui import progressive as P

    part = P.first_part(big_files[order], fraction=0.1)
    view = P.part_view(part)
    assert view.findings is None
    shown = view.table
    full = _full_rows(full_ws[order], view.selection)
    if order == "shuffle":
        assert len(shown) == 0
        return
    assert len(shown) > 20
    _same_rows(shown, full)
    # the first rows: the part's rows are the first of the full table, in its order
    assert list(shown["interval_end"]) == list(full["interval_end"].iloc[:len(shown)])


@pytest.mark.parametrize("order", ["lpar", "time"])
def test_the_parts_table_is_computed_without_summary_rows(big_files, order, monkeypatch):
    """The part's table is its first LPAR's interval rows alone (no whole-window pass for summary rows that
    final_rows would leave out): the very rows, columns and dtypes of the table with summary rows, cut."""
    from app.engine import Workspace
    from app.ui import progressive as P
    from app.ui.frames import SUMMARY_COL, interval_frame

    asked = []
    real = Workspace.metrics

    def metrics(self, *a, **k):
        asked.append(k.get("summary"))
        return real(self, *a, **k)
    monkeypatch.setattr(Workspace, "metrics", metrics)
    part = P.first_part(big_files[order], fraction=0.3)
    view = P.part_view(part)
    assert asked == [False]                                  # one table, asked without its summary rows
    monkeypatch.setattr(Workspace, "metrics", real)
    ws = Workspace(cache=False, coverage_notes=False)
    ws.add_all([part.result])
    before = P.final_rows(interval_frame(ws, view.selection, windowed=True, summary=True), part.rest_min,
                          P.part_systems(part))
    assert len(view.table) > 20 and not view.table[SUMMARY_COL].any()
    pd.testing.assert_frame_equal(view.table, before, check_dtype=True)


def test_the_parts_tree_has_no_coverage_notes(big_files, full_ws):
    """The part's rows end at its cut, not where the file's do: its tree's CEC and LPAR nodes carry no coverage
    figures (the whole file's tree has them on every CEC and LPAR node), and the same nodes as the whole file's
    first levels (in time order the part holds every LPAR)."""
    from app.ui import progressive as P

    view = P.part_view(P.first_part(big_files["time"], fraction=0.1))
    nodes = [n for r in view.roots for n in (r, *r.children)]
    assert nodes and all("coverage_pct" not in n.info and "coverage_note" not in n.info for n in nodes)
    whole = [n for r in full_ws["time"].tree() for n in (r, *r.children)]
    assert [n.key for n in nodes] == [n.key for n in whole]
    assert all("coverage_pct" in n.info for n in whole if n.level in ("cec", "lpar"))


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(order=st.sampled_from(ORDERS), cut=st.floats(0.2, 0.95),
       level=st.sampled_from(["lpar", "cec", "class", "pool"]))
def test_no_shown_row_differs_from_the_final_one(big_files, full_ws, order, cut, level):
    """Whatever the cut point (the part's end) and the file's order, a row of the part that is shown is the
    final row: for an LPAR, its processor class, its CEC and the CEC's GCP pool."""
    from app.ui import progressive as P
    from app.ui.frames import interval_frame
    from app.ui.selection import Selection

    part = P.first_part(big_files[order], fraction=cut)
    assert part is not None
    view = P.part_view(part)
    lpar = view.selection.nodes[0]
    nodes = {"lpar": lpar, "cec": ("cec", lpar[1]), "class": ("class", *lpar[1:], "GCP"),
             "pool": ("pool", lpar[1], "GCP")}
    sel = Selection(nodes=(nodes[level],))
    if level == "lpar":
        shown = view.table
    else:   # another level of the part's Workspace, cut the same way
        from app.engine import Workspace

        ws = Workspace(cache=False)
        ws.add_all([part.result])
        shown = P.final_rows(interval_frame(ws, sel, windowed=True, summary=True), part.rest_min,
                             P.part_systems(part))
    full = _full_rows(full_ws[order], sel)
    if len(shown):
        _same_rows(shown, full)
    if order == "time" and level != "cec":
        # in time order every interval ended an interval before the cut is shown
        limit = part.rest_min[""] - pd.Timedelta(minutes=15)
        body = full.loc[pd.to_datetime(full["interval_end"]) < limit]
        assert len(shown) >= len(body) - 1


# -- the window ------------------------------------------------------------------------------------------------

@pytest.fixture
def gate(monkeypatch):
    """Holds the whole file's read (after the first part was handed over) until set."""
    from app.analysis import reading

    real, ev = reading.read_one, threading.Event()

    def held(path, **kw):
        ev.wait(60)
        return real(path, **kw)
    monkeypatch.setattr(reading, "read_one", held)
    yield ev
    ev.set()


def _partial_shown(w) -> bool:
    return w._partial is not None and w._partial.shown


def test_window_shows_the_part_then_the_whole_file(qtbot, window, big_files, full_ws, gate):
    w = window
    resets: list[int] = []
    w.table.model.modelReset.connect(lambda: resets.append(w.table.model.rowCount()))
    assert w.open_files([big_files["time"]]) == 1
    qtbot.waitUntil(lambda: _partial_shown(w), timeout=60_000)
    msg = w.statusBar().currentMessage()
    assert msg.startswith("Loading time.smf - ") and " shown" in msg and "2026-10-01 00:" in msg, msg
    assert w.busy() and not w.loaded() and not w.ws.files          # nothing added to the window's Workspace
    part = w.table.model.frame.copy()
    assert len(part) > 10 and not part["_summary"].any()
    sel = w.selection.value
    full = _full_rows(full_ws["time"], sel)
    _same_rows(part, full)
    from app.ui import messages as M

    assert w.tabs.tabText(w.tabs.indexOf(w.health)) == M.TAB_HEALTH     # the part's findings are not shown
    # the user scrolls the part and picks a row; the Table tab stays current
    w.table.select_row(8)
    w.table.view.verticalScrollBar().setValue(5)
    qtbot.waitUntil(lambda: w.table.view.rowAt(0) > 0, timeout=5_000)
    top_end = part["interval_end"].iloc[w.table.model.frame_row(w.table.view.rowAt(0))]
    cur_end = part["interval_end"].iloc[w.table.model.frame_row(w.table.view.currentIndex().row())]
    n_resets = len(resets)
    gate.set()
    wait_loaded(qtbot, w)
    assert w.loaded() and len(w.ws.files) == 1 and w.errors == []
    assert w.selection.value.nodes == sel.nodes
    assert w.tabs.currentWidget() is w.table
    final = w.table.model.frame
    assert len(final) > len(part)
    assert all(n > 0 for n in resets[n_resets:]), "an empty table was shown between the part and the whole file"
    m = w.table.model
    assert final["interval_end"].iloc[m.frame_row(w.table.view.rowAt(0))] == top_end
    assert final["interval_end"].iloc[m.frame_row(w.table.view.currentIndex().row())] == cur_end
    body = final.loc[~final["_summary"]].reset_index(drop=True)
    _same_rows(part, body)
    assert not w.statusBar().currentMessage().startswith("Loading")


def test_cancel_during_the_progressive_load(qtbot, window, big_files, gate, smf_a):
    w = window
    assert w.open_files([big_files["lpar"]]) == 1
    qtbot.waitUntil(lambda: _partial_shown(w), timeout=60_000)
    assert w.table.model.rowCount() > 0 and w.tree.model.rowCount() > 0
    job = next(iter(w.loader.jobs.values()))
    job.widget.button.click()                                   # the status bar's Cancel
    gate.set()
    wait_loaded(qtbot, w)
    qtbot.waitUntil(lambda: w.loader.running_workers() == 0, timeout=60_000)
    assert not w.ws.files and not w.loaded() and w.errors == []
    assert w.table.model.rowCount() == 0 and w.tree.model.rowCount() == 0
    assert w._partial is None
    # the window is usable: another file opens the usual way
    assert w.open_files([smf_a]) == 1
    wait_loaded(qtbot, w)
    assert w.loaded() and len(w.ws.files) == 1 and w.table.model.rowCount() > 0


def test_a_second_file_is_not_opened_progressively(qtbot, window, big_files, smf_a):
    """A part is shown only in an empty window: with a file open, the big one comes the usual way."""
    w = window
    w.open_files([smf_a])
    wait_loaded(qtbot, w)
    parts = []
    w.loader.file_part.connect(parts.append)
    w.open_files([big_files["time"]])
    wait_loaded(qtbot, w)
    assert parts == [] and len(w.ws.files) == 2 and w.errors == []
    assert w.table.model.rowCount() > 0


def test_a_read_failing_after_the_part_leaves_no_part_rows(qtbot, window, big_files, monkeypatch):
    """The whole read raises after the part was shown: the failure is reported (a finding, the error dialog's
    list) and none of the part's rows stay in the table."""
    from app.analysis import reading

    w = window
    ev = threading.Event()

    def broken(path, **kw):
        ev.wait(60)
        raise RuntimeError("disk gone")
    monkeypatch.setattr(reading, "read_one", broken)
    monkeypatch.setattr("app.ui.main_window.show_error", lambda *a, **k: None)
    assert w.open_files([big_files["time"]]) == 1
    qtbot.waitUntil(lambda: _partial_shown(w), timeout=60_000)
    assert w.table.model.rowCount() > 0
    ev.set()
    wait_loaded(qtbot, w)
    assert w.errors and "disk gone" in w.errors[0]
    assert w.table.model.rowCount() == 0 and w.table.stack.currentIndex() == 0
    assert w._partial is None and not w.selection.value.nodes      # no LPAR of the part is left selected


def test_the_whole_table_after_the_part_does_not_hold_the_next_job(qtbot, window, big_files, gate, monkeypatch):
    """The part's table was the first on screen: the whole file's table replacing it does not hold the next view
    job (the tree's class and CPU levels) for its paint (app/ui/first_table.py); a later open in an empty window
    holds it again."""
    w = window
    holds: list[bool] = []
    real_hold = w.runner.hold
    monkeypatch.setattr(w.runner, "hold", lambda: (holds.append(bool(w.ws.files)), real_hold()))
    assert w.open_files([big_files["time"]]) == 1
    qtbot.waitUntil(lambda: _partial_shown(w), timeout=60_000)
    gate.set()
    wait_loaded(qtbot, w)
    assert w.loaded() and w.errors == [] and w.table.model.rowCount() > 0
    assert holds == []                                  # neither the part's table nor the whole file's held it
    assert "_part_replaced" not in w.__dict__ and "_paint_watch" not in w.__dict__ and not w.runner._held
    assert w.tree.model.rowCount() > 0 and w.loader.held == []


def test_a_file_opened_the_usual_way_still_holds_the_next_job(qtbot, window, smf_b, monkeypatch):
    """Without a part, the first table holds the next job until painted, even with a flag left from an earlier
    part (opening files in an empty window starts afresh: first_table.begin)."""
    w = window
    holds: list[bool] = []
    real_hold = w.runner.hold
    monkeypatch.setattr(w.runner, "hold", lambda: (holds.append(bool(w.ws.files)), real_hold()))
    w._part_replaced = True
    assert w.open_files([smf_b]) == 1
    wait_loaded(qtbot, w)
    assert w.loaded() and w.errors == [] and holds == [True]    # once, with the file added: its first table


def test_the_tree_levels_come_before_the_whole_table_after_a_part(qtbot, window, big_files, full_ws, gate,
                                                                   monkeypatch):
    """With the part on screen, the whole file's first job gives the tree's class and CPU levels while the part's
    table stays; the whole file's table follows, then the whole tree's values (window_partial.plan_job)."""
    w = window
    events: list[tuple[str, int]] = []
    real_deeper, real_values = w.tree.add_deeper, w.tree.set_values
    monkeypatch.setattr(w.tree, "add_deeper", lambda *a, **k: (
        events.append(("levels", len(w.table.model.frame))), real_deeper(*a, **k)))
    monkeypatch.setattr(w.tree, "set_values", lambda *a, **k: (events.append(("values", 0)), real_values(*a, **k)))
    w.table.model.modelReset.connect(lambda: events.append(("table", 0)) if w.ws.files else None)
    assert w.open_files([big_files["time"]]) == 1
    qtbot.waitUntil(lambda: _partial_shown(w), timeout=60_000)
    part = w.table.model.frame.copy()
    sel = w.selection.value
    gate.set()
    wait_loaded(qtbot, w)
    assert w.loaded() and w.errors == []
    names = [e[0] for e in events]
    assert names.index("levels") < names.index("table") < names.index("values"), names
    assert events[names.index("levels")][1] == len(part)      # the part's table was still on screen
    assert any(n.level == "cpu" for n in w.tree.model.all_nodes())
    final = w.table.model.frame
    assert w.selection.value.nodes == sel.nodes and len(final) > len(part)
    body = final.loc[~final["_summary"]].reset_index(drop=True)
    full = _full_rows(full_ws["time"], sel)
    assert len(body) == len(full)
    _same_rows(body, full)                                      # the whole file's rows, not the part's
    assert w._partial is None and not w.statusBar().currentMessage().startswith("Loading")


class _Paints(QObject):
    """Counts the paint events of a widget that come while its model has rows."""

    def __init__(self, widget, model) -> None:
        super().__init__()
        self.n, self._model = 0, model
        widget.installEventFilter(self)

    def eventFilter(self, obj, event):  # noqa: N802 - Qt API
        if event.type() == QEvent.Type.Paint and self._model.rowCount() > 0:
            self.n += 1
        return False


def test_the_parts_table_is_painted_once(qtbot, window, big_files, gate):
    # its column widths, set to its rows, each start a zero timer of the view's that repaints the viewport when
    # it fires: fired after the first paint, they painted both panes a second time (0.07-0.1 CPU s of the GUI
    # thread beside the whole file's read); the table's updates stay off until they fired
    w = window
    paints = _Paints(w.table.view.viewport(), w.table.model)
    frozen = _Paints(w.table.frozen.viewport(), w.table.model)
    assert w.open_files([big_files["time"]]) == 1
    qtbot.waitUntil(lambda: _partial_shown(w), timeout=60_000)
    qtbot.waitUntil(lambda: w.table.updatesEnabled() and paints.n > 0, timeout=5_000)
    qtbot.wait(300)                   # the event loop runs on: no paint more (the read is held by the gate)
    assert (paints.n, frozen.n) == (1, 1)
    assert w.table.model.rowCount() > 10


def test_the_status_bar_keeps_its_height_when_the_read_ends(qtbot, window, big_files, gate):
    # without the read's bar the status bar was 4 px lower: the window's layout moved at the read's end and the
    # part's table (and the tree) were painted again, beside the whole file's add
    from app.ui.loader import JobWidget

    w = window
    assert w.open_files([big_files["time"]]) == 1
    qtbot.waitUntil(lambda: _partial_shown(w), timeout=60_000)
    bar = w.statusBar()
    qtbot.waitUntil(lambda: any(j.isVisible() for j in bar.findChildren(JobWidget)), timeout=5_000)
    qtbot.wait(50)
    with_bar, table_h = bar.height(), w.table.height()
    gate.set()
    wait_loaded(qtbot, w)
    qtbot.wait(50)
    assert not [j for j in bar.findChildren(JobWidget) if j.isVisible()]
    assert (bar.height(), w.table.height()) == (with_bar, table_h)
