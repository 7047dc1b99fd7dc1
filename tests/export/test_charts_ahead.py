"""A comparison deck's charts made ahead (issue 23, the cold deck): ``export --before --after --out x.pptx`` makes
the before side's chart slides (series, the chart XML parsed and formatted, embedded workbooks' bytes; no part of
the deck) on the before side's thread once its levels are, while the after side is read, and the after side's on a
thread of its own once its selection is made, while the comparison and the first slides are made; ``chart_deck``
takes them (waiting while they are made) when it is asked for the same workspace, zone and rows.  The deck is the
same, part by part, as one whose charts are all made by ``chart_deck``."""

from __future__ import annotations

import io
import threading
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "samples"
BEFORE = str(SAMPLES / "before_z15_ZOSA_smf113.rdw.gz")
AFTER = str(SAMPLES / "after_z16_ZOSA_smf113.rdw.gz")


def _parts(src) -> dict[str, object]:
    """Every part, each embedded workbook's parts too, without the times of the run (``docProps/core.xml``)."""
    with zipfile.ZipFile(src) as z:
        return {n: (_parts(io.BytesIO(z.read(n))) if n.endswith(".xlsx") else z.read(n))
                for n in z.namelist() if n != "docProps/core.xml"}


def _deck(out: Path) -> int:
    from app.cli import main

    return main(["export", "--before", BEFORE, "--after", AFTER, "--hours", "08-17", "--days", "mon-fri",
                 "--out", str(out)])


def test_the_before_side_charts_are_made_on_its_thread_and_the_deck_is_the_same(monkeypatch, tmp_path):
    import app.export.pptx_slides as PS
    from app.engine.parallel import threads

    if threads() < 2:
        pytest.skip("the sides are read on one thread here")
    monkeypatch.setenv("NESTSCOPE_CACHE", "0")
    made, taken = [], []
    real_prepare, real_take = PS.prepare_charts, PS._take_prepared

    def prepare(*a, **kw):
        made.append(threading.current_thread().name)
        return real_prepare(*a, **kw)

    def take(*a, **kw):
        got = real_take(*a, **kw)
        taken.append(got is not None)
        return got
    monkeypatch.setattr(PS, "prepare_charts", prepare)
    monkeypatch.setattr(PS, "_take_prepared", take)
    assert _deck(tmp_path / "ahead.pptx") == 0
    assert made == ["nestscope-before-side", "nestscope-after-ready"]
    assert taken == [True, True]           # both sides' charts taken by chart_deck (before first)
    monkeypatch.setattr(PS, "prepare_charts", lambda *a, **kw: None)
    assert _deck(tmp_path / "plain.pptx") == 0
    assert _parts(tmp_path / "ahead.pptx") == _parts(tmp_path / "plain.pptx")


class _Ws:
    """What chart_slides reads of a workspace: its formula sets (none: no RNI chart)."""

    formula_sets: dict = {}


def _frame(cpi: float) -> pd.DataFrame:
    ends = pd.date_range("2026-10-05 00:15", periods=4, freq="15min")
    return pd.DataFrame({"cec": "C1", "lpar": "SYSA", "interval_start": ends - pd.Timedelta(minutes=15),
                         "interval_end": ends, "CPI": [cpi, cpi, np.nan, cpi], "L1MP": 2.0, "LPARCPU": 50.0})


def test_prepared_charts_are_taken_for_the_same_workspace_zone_and_rows_only():
    import app.export.pptx_slides as PS

    ws, other = _Ws(), _Ws()
    PS.prepare_charts(lambda by: _frame(1.5), ws, "utc")
    assert PS._take_prepared(_frame(1.5), ws, "utc") is not None
    assert PS._take_prepared(_frame(1.5), ws, "utc") is None            # taken once
    PS.prepare_charts(lambda by: _frame(1.5), ws, "utc")
    assert PS._take_prepared(_frame(1.5), other, "utc") is None         # another workspace
    PS.prepare_charts(lambda by: _frame(1.5), ws, "utc")
    assert PS._take_prepared(_frame(1.5), ws, "local") is None          # another zone
    PS.prepare_charts(lambda by: _frame(1.5), ws, "utc")
    assert PS._take_prepared(_frame(1.6), ws, "utc") is None            # other rows


def test_a_prepared_chart_data_gives_the_bytes_python_pptx_would_make():
    from pptx.enum.chart import XL_CHART_TYPE

    from app.export.pptx_parts import xy_data

    x = np.array([46000.0, 46000.25, np.nan, 46000.75])
    series = [("SYSA", x, np.array([1.0, np.nan, 2.0, 3.0]), {}), ("=1+2", x, np.array([4.0, 5.0, 6.0, 7.0]), {})]
    plain, ready = xy_data(series), xy_data(series, prepare=True)
    kind = XL_CHART_TYPE.XY_SCATTER_LINES_NO_MARKERS
    assert ready._ready is not None and ready._ready[0] == kind
    assert ready.xml_bytes(kind) == plain.xml_bytes(kind)
    assert _parts(io.BytesIO(ready.xlsx_blob)) == _parts(io.BytesIO(plain.xlsx_blob))
    # another chart type: made then, not the prepared XML
    assert ready.xml_bytes(XL_CHART_TYPE.XY_SCATTER) == plain.xml_bytes(XL_CHART_TYPE.XY_SCATTER)
    assert ready.xml_bytes(XL_CHART_TYPE.XY_SCATTER) != ready.xml_bytes(kind)


def test_charts_being_made_are_waited_for_and_a_second_side_is_kept_beside_the_first():
    import app.export.pptx_slides as PS

    ws, other = _Ws(), _Ws()
    PS.prepare_charts(lambda by: _frame(1.5), ws, "utc")
    PS.prepare_charts(lambda by: _frame(2.5), other, "utc", first=False)     # the other side: kept beside it
    assert PS._take_prepared(_frame(2.5), other, "utc") is not None
    assert PS._take_prepared(_frame(1.5), ws, "utc") is not None
    PS.prepare_charts(lambda by: _frame(1.5), ws, "utc")
    PS.prepare_charts(lambda by: _frame(2.5), other, "utc")                 # a first side again: the earlier let go
    assert PS._take_prepared(_frame(1.5), ws, "utc") is None
    # made on another thread, still being made when chart_deck asks: waited for, not made a second time
    go, started = threading.Event(), threading.Event()

    def slow(by):
        started.set()
        go.wait(10)
        return _frame(1.5)
    th = threading.Thread(target=PS.prepare_charts, args=(slow, ws, "utc"))
    th.start()
    assert started.wait(10)
    threading.Timer(0.2, go.set).start()
    assert PS._take_prepared(_frame(1.5), ws, "utc") is not None
    th.join()
    # a preparation that fails leaves nothing to wait for
    def broken(by):
        raise RuntimeError("no rows")
    with pytest.raises(RuntimeError):
        PS.prepare_charts(broken, ws, "utc")
    assert PS._take_prepared(_frame(1.5), ws, "utc") is None


def _chart_parts(deck_bytes: bytes) -> dict[str, bytes]:
    with zipfile.ZipFile(io.BytesIO(deck_bytes)) as z:
        return {n: z.read(n) for n in z.namelist() if n.startswith(("ppt/charts/", "ppt/slides/"))}


@pytest.mark.parametrize("x_format", ["mm-dd hh:mm", None])
def test_a_chart_made_ahead_is_the_chart_xy_chart_makes(x_format):
    """The same series and titles through :func:`ready_xy_chart` (on another thread) and through :func:`xy_chart`
    on the slide: the same chart part (its XML, with the workbook's relationship), slide and workbook part."""
    from app.export.pptx_parts import Deck, ReadyChart, ready_xy_chart, xy_chart, xy_data

    x = np.array([46000.0, 46000.25, np.nan, 46000.75, 46001.0])
    series = [("SYSA", x, np.array([1.0, np.nan, 2.0, 3.0, 2.5]), {"color": "1F77B4"}),
              ("SYSB", x, np.array([4.0, 5.0, 6.0, 7.0, 6.5]), {"color": "D62728", "dash": True, "width": 2.5})]
    got = {}
    th = threading.Thread(target=lambda: got.setdefault("ready", ready_xy_chart(
        series, "interval end (UTC)", "CPI", x_format, data=xy_data(series, prepare=True))))
    th.start()
    th.join()
    assert isinstance(got["ready"], ReadyChart)
    out = {}
    for how in ("plain", "ready"):
        deck = Deck("t", "notes")
        for k in range(2):           # a second chart: the next part names
            s = deck.slide("chart", "chart")
            data = got["ready"] if how == "ready" and k == 1 else xy_data(series)
            xy_chart(s, 0.4, 1.25, 12.5, 6.0, series, "chart", "interval end (UTC)", "CPI", x_format, data=data)
        buf = io.BytesIO()
        deck.save(buf)
        out[how] = buf.getvalue()
    plain, ready = _chart_parts(out["plain"]), _chart_parts(out["ready"])
    assert "ppt/charts/chart2.xml" in ready and "ppt/charts/_rels/chart2.xml.rels" in ready
    assert plain == ready
    assert b"<c:externalData" in ready["ppt/charts/chart2.xml"]
    with zipfile.ZipFile(io.BytesIO(out["ready"])) as z:
        assert "ppt/embeddings/Microsoft_Excel_Sheet2.xlsx" in z.namelist()


def test_a_sides_facts_made_ahead_are_taken_once_for_an_equal_selection_and_waited_for(sample_result):
    """:func:`app.export.story.prepare_side` makes a side's configuration changes and the coverage its caveats read;
    :func:`side_changes` / :func:`caveats` take them for an equal selection over the same rows (the same values as
    made there), once; a selection of other rows, or nothing made, is computed there."""
    import app.export.story as story
    from app.analysis import make_workspace
    from app.engine.compare import Selection, compare
    from app.engine.shift import make_shift

    wb = make_workspace([sample_result("before_z15_ZOSA_smf113.rdw.gz")], None)
    wa = make_workspace([sample_result("after_z16_ZOSA_smf113.rdw.gz")], None)
    shift = make_shift("08-17", "mon-fri")
    c = compare(Selection(wb, shift=shift, name="before"), Selection(wa, shift=shift, name="after"))
    plain_changes, plain_caveats = story.side_changes(c), story.caveats(c, story.side_changes(c))
    calls = []
    real = story.config_changes

    def counted(sel):
        calls.append(sel.name)
        return real(sel)
    story.prepare_side(Selection(wb, shift=shift, name="before"), first=True)   # equal, not the same object
    th = threading.Thread(target=story.prepare_side, args=(c.after,))
    th.start()
    th.join()
    assert set(story._AHEAD) == {(w, s) for w in ("changes", "coverage") for s in (c.before, c.after)}
    story.config_changes = counted
    try:
        changes = story.side_changes(c)
        assert changes == plain_changes and calls == []                 # both taken
        assert story.caveats(c, changes) == plain_caveats and story._AHEAD == {}   # coverage taken, once
        assert story.side_changes(c) == plain_changes and calls == ["before", "after"]   # nothing left: made here
        # another selection (another window): not taken
        story.prepare_side(c.before, first=True)
        other = Selection(wb, shift=make_shift("22-06", None), name="before")
        story.side_changes(compare(other, c.after))
        assert calls[-2:] == ["before", "after"] and ("changes", c.before) in story._AHEAD
    finally:
        story.config_changes = real
        story.forget_sides()
    # being made on another thread when asked: waited for
    go = threading.Event()

    def slow(sel):
        go.wait(10)
        return real(sel)
    story.config_changes = slow
    try:
        th = threading.Thread(target=story.prepare_side, args=(c.before,), kwargs={"first": True})
        th.start()
        while ("changes", c.before) not in story._AHEAD:
            th.join(0.01)
        story.config_changes = counted
        threading.Timer(0.2, go.set).start()
        n = len(calls)
        assert story._take("changes", c.before, lambda: real(c.before)) == plain_changes[0]
        th.join()
        assert len(calls) == n
    finally:
        story.config_changes = real
        story.forget_sides()
