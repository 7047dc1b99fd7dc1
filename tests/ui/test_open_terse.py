"""A tersed SMF 113 dump dropped on the window shows the numbers of the plain file (issue 22)."""

from __future__ import annotations

import gzip

import pytest
from PySide6.QtCore import QModelIndex

from tests.terse_builders import rdw_records, tersed
from tests.ui.conftest import SAMPLES, wait_loaded
from tests.ui.test_open import _drop


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("terse_ui")
    recs = rdw_records(gzip.decompress((SAMPLES / "after_z16_ZOSA_smf113.rdw.gz").read_bytes()))[:300]
    plain = d / "zosa.rdw"
    plain.write_bytes(b"".join((len(r) + 4).to_bytes(2, "big") + b"\0\0" + r for r in recs))
    trs = d / "SMF.DUMP.TRS"
    trs.write_bytes(tersed(recs, "PACK", variable=True, lrecl=32756, spanned=True))
    return str(plain), str(trs)


def _cells(window) -> list[list]:
    m = window.table.model
    return [[m.data(m.index(r, c, QModelIndex())) for c in range(m.columnCount())] for r in range(m.rowCount())]


def _drop_and_read(qtbot, window, path: str):
    assert _drop(window, [path]).isAccepted()
    wait_loaded(qtbot, window)
    assert window.errors == []
    return _cells(window), window.ws.metrics(by="class")


def test_dropped_tersed_dump_shows_the_plain_numbers(qtbot, files):
    from app.engine import Workspace
    from app.ui.main_window import MainWindow

    seen = []
    for path in files:
        w = MainWindow(Workspace())
        qtbot.addWidget(w)
        w.resize(1440, 900)
        w.show()
        qtbot.waitExposed(w)
        seen.append(_drop_and_read(qtbot, w, path))
        assert [r.framing for r in w.ws.files] == (["rdw"] if path == files[0] else ["terse PACK + RDW"])
        assert {n.key[2] for n in w.tree.model.all_nodes() if n.level == "lpar"} == {"ZOSA"}
        assert not [f for f in w.ws.findings if f.severity == "error"]
        w.loader.cancel_all()
    (cells_a, met_a), (cells_b, met_b) = seen
    assert len(cells_a) > 0 and cells_a == cells_b
    assert met_a.drop(columns=["quality"]).equals(met_b.drop(columns=["quality"]))
