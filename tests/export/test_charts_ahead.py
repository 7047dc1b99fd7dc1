"""A comparison deck's before-side charts made ahead (issue 23, the cold deck): ``export --before --after --out
x.pptx`` makes the before side's chart slides' data (series, chart XML, embedded workbooks: plain bytes) on the
before side's thread once its levels are, while the after side is read; ``chart_deck`` takes them when it is asked
for the same workspace, zone and rows.  The deck is the same, part by part, as one whose charts are all made by
``chart_deck``."""

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
    assert made == ["nestscope-before-side"]
    assert taken == [True, False]          # the before side's (first) taken; the after side's made by chart_deck
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
    # the light XML the deck takes: made ahead, the whole chart once its points are spliced in
    from pptx.opc.oxml import serialize_part_xml
    from pptx.oxml import parse_xml

    from app.export.chart_data import splice_points

    xml, points = ready.light_xml(kind)
    assert xml is ready._ready[1] and points is ready._ready[2]
    assert splice_points(serialize_part_xml(parse_xml(xml)), points) == serialize_part_xml(
        parse_xml(plain.xml_bytes(kind)))
    assert _parts(io.BytesIO(ready.xlsx_blob)) == _parts(io.BytesIO(plain.xlsx_blob))
    # another chart type: made then, not the prepared XML
    assert ready.xml_bytes(XL_CHART_TYPE.XY_SCATTER) == plain.xml_bytes(XL_CHART_TYPE.XY_SCATTER)
    assert ready.xml_bytes(XL_CHART_TYPE.XY_SCATTER) != ready.xml_bytes(kind)


def test_the_before_sides_charts_wait_for_the_writer_imports_started_ahead(monkeypatch):
    """The before side's chart data imports python-pptx's modules only once the writers' imports started ahead
    (app.export.import_writers_ahead) are over: importing them on two threads at once could leave ``pptx.oxml``'s
    element classes half registered for good (the deck then failed at its first slide: "'lxml.etree._Element'
    object has no attribute 'type'", about one run in three of tests/analysis + this module with the bundled
    samples).  The threads stay for the writers to wait for."""
    import app.commands.export as cmd
    import app.export as ex
    import app.export.pptx_slides as PS
    import app.export.story as ST

    gate = threading.Event()
    ahead = threading.Thread(target=gate.wait, args=(10,), name="import-ahead-stand-in")
    ahead.start()
    monkeypatch.setattr(ex, "_AHEAD", [ahead])
    made = threading.Event()
    monkeypatch.setattr(PS, "prepare_charts", lambda *a, **k: made.set())
    monkeypatch.setattr(ST, "prepare_side", lambda sel: None)

    class Sel:                       # what _charts_ahead reads of a selection
        metrics = None
        workspace = type("W", (), {"default_zone": lambda self: "UTC"})()
    side = threading.Thread(target=cmd._charts_ahead, args=(Sel(), None))
    side.start()
    assert not made.wait(0.3)        # held while the imports ahead run
    gate.set()
    side.join(10)
    assert made.is_set()
    assert ex._AHEAD == [ahead]      # still there for the writers' own wait
