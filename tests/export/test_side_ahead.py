"""A comparison deck's before side's story pieces made ahead (issue 23, the cold deck): on the before side's thread,
once its charts are made, :func:`app.export.story.prepare_side` makes that side's configuration changes, CPUs per
class and coverage caveats; the summary and configuration slides take each once, for the very same selection.  The
deck is the same, part by part, as one whose pieces are all made by the writers."""

from __future__ import annotations

import threading
from pathlib import Path

import pandas as pd
import pytest

from test_charts_ahead import _deck, _parts

SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "samples"


def test_the_before_sides_pieces_are_made_on_its_thread_taken_once_and_the_deck_is_the_same(monkeypatch, tmp_path):
    import app.export.story as ST
    from app.engine.parallel import threads

    if threads() < 2:
        pytest.skip("the sides are read on one thread here")
    monkeypatch.setenv("NESTSCOPE_CACHE", "0")
    made, taken = [], []
    real_prepare, real_taken = ST.prepare_side, ST._taken

    def prepare(sel):
        made.append((sel.name, threading.current_thread().name))
        return real_prepare(sel)

    def take(sel, what):
        got = real_taken(sel, what)
        taken.append((sel.name, what, got is not None))
        return got
    monkeypatch.setattr(ST, "prepare_side", prepare)
    monkeypatch.setattr(ST, "_taken", take)
    assert _deck(tmp_path / "ahead.pptx") == 0
    assert made == [("before", "nestscope-before-side")]
    # each piece of the before side taken once; the after side's made by the writers
    assert sorted(t for t in taken if t[2]) == [("before", "changes", True), ("before", "coverage", True),
                                                ("before", "cpus", True)]
    assert {(s, w) for s, w, ok in taken if not ok} == {("after", "changes"), ("after", "coverage"), ("after", "cpus")}
    monkeypatch.setattr(ST, "prepare_side", lambda sel: None)
    assert _deck(tmp_path / "plain.pptx") == 0
    assert _parts(tmp_path / "ahead.pptx") == _parts(tmp_path / "plain.pptx")


class _Ws:
    """A workspace stand-in: only its identity matters to the pieces made ahead."""


def test_pieces_are_taken_once_and_for_the_same_selection_only(monkeypatch):
    import app.export.story as ST
    from app.engine.compare import Selection
    from app.engine.shift import make_shift

    calls: list[str] = []

    def fake(kind):
        def make(sel):
            calls.append(kind)
            return f"{kind} of {sel.name}"
        return make
    monkeypatch.setattr(ST, "config_changes", fake("changes"))
    monkeypatch.setattr(ST, "class_cpus", fake("cpus"))
    monkeypatch.setattr(ST, "coverage_caveats", fake("coverage"))
    ws, other = _Ws(), _Ws()
    t0, t1 = pd.Timestamp("2026-10-05"), pd.Timestamp("2026-11-04")
    nodes = (("lpar", "8561-45A12", "ZOSA"),)
    sel = Selection(ws, nodes, t0, t1, make_shift("08-17", "mon-fri"), "before")
    ST.prepare_side(sel)
    assert calls == ["changes", "cpus", "coverage"]
    # an equal selection (made again: same workspace object, nodes, window, shift and name) takes each piece once
    again = Selection(ws, nodes, t0, t1, make_shift("08-17", "mon-fri"), "before")
    assert ST._taken(again, "changes") == "changes of before"
    assert ST._taken(again, "changes") is None
    for changed in (Selection(other, nodes, t0, t1, make_shift("08-17", "mon-fri"), "before"),
                    Selection(ws, (("lpar", "8561-45A12", "ZOSB"),), t0, t1, make_shift("08-17", "mon-fri"), "before"),
                    Selection(ws, nodes, t0, t1 + pd.Timedelta(hours=1), make_shift("08-17", "mon-fri"), "before"),
                    Selection(ws, nodes, t0, t1, make_shift("08-18", "mon-fri"), "before"),
                    Selection(ws, nodes, t0, t1, make_shift("08-17", "mon-fri"), "after")):
        assert ST._taken(changed, "cpus") is None
    assert ST._taken(sel, "cpus") == "cpus of before"
    # what the writers call: the prepared piece for this selection, else computed (counted in calls)
    n = len(calls)
    assert ST._side_changes(sel) == "changes of before" and calls[n:] == ["changes"]   # taken above: computed
    ST.prepare_side(sel)
    n = len(calls)
    assert ST._side_changes(again) == "changes of before" and calls[n:] == []           # the prepared one
    # a second prepare drops the first one's pieces
    ST.prepare_side(again)
    ST.prepare_side(Selection(other, nodes, t0, t1, None, "before"))
    assert ST._taken(sel, "coverage") is None
