"""A fleet dataset and implausible CPU-intervals (issue 20): ``extract`` marks them, ``query`` leaves them out of
every sum as ``report`` does (or keeps them with ``keep_implausible``), at every level, and counts them."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
import app.ui  # noqa: E402,F401  (pins None/True/False before Qt runs, as test_dataset_view)

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
from _fleet_helpers import assert_same  # noqa: E402
from damaged import samples, write  # noqa: E402

from app.cli import main  # noqa: E402
from app.dataset import Dataset  # noqa: E402
from app.dataset.query import QuerySpec, run_query  # noqa: E402
from app.engine import Workspace  # noqa: E402
from app.engine.metrics import metric_ids  # noqa: E402
from app.formats import read_file  # noqa: E402


@pytest.fixture(scope="module")
def damaged(tmp_path_factory):
    d = tmp_path_factory.mktemp("ds_implausible")
    path, _ = write(d, samples(intervals=4), (5, "E149"))
    ds = Dataset(d / "ds", create=True)
    assert ds.extract(path).status == "added"
    return ds, path


@pytest.mark.parametrize("keep", [False, True])
@pytest.mark.parametrize("by", ["lpar", "interval", "cpu"])
def test_query_equals_report(damaged, by, keep):
    ds, path = damaged
    ws = Workspace(cache=False, keep_implausible=keep)
    ws.add(read_file(path))
    a = run_query(ds, QuerySpec(by=by, keep_implausible=keep))
    b = ws.metrics(by=by)
    assert_same(a, b, by, metric_ids(ws.formula_sets))
    assert a["left_out"].tolist() == b["left_out"].tolist()
    assert int(a["left_out"].sum()) == (0 if keep else 1)


def test_query_command_says_what_was_left_out(damaged, capsys):
    ds, _ = damaged
    assert main(["query", str(ds.root)]) == 0
    assert "left out: 1 CPU-interval(s)" in capsys.readouterr().out
    assert main(["query", str(ds.root), "--keep-implausible"]) == 0
    assert "left out" not in capsys.readouterr().out


def test_dataset_window_follows_the_switch(qtbot, damaged, tmp_path, monkeypatch):
    """The dataset window queries with the main window's View > Keep implausible intervals setting."""
    monkeypatch.setenv("NESTSCOPE_SETTINGS_FILE", str(tmp_path / "s.ini"))
    from app.ui import settings
    from app.ui.dataset_view import DatasetWindow
    from app.ui.implausible import SETTING

    ds, _ = damaged
    w = DatasetWindow(ds.root)
    qtbot.addWidget(w)
    assert w.spec().keep_implausible is False
    settings.set_value(SETTING, True)
    assert w.spec().keep_implausible is True
