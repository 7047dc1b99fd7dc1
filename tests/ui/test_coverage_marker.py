"""The tree marks CEC/LPAR rows whose parts cover different times (issue 9), on the real sample."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Qt

from app.engine import Workspace
from app.formats import read_file
from app.ui.tree_model import COL_BUSY, MachineTreeModel

SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "samples"


def test_cec_row_with_short_lpar_is_marked():
    ws = Workspace()
    ws.add_all([read_file(p) for p in sorted(SAMPLES.glob("after_*"))])
    model = MachineTreeModel()
    model.set_roots(ws.tree())
    cec = model.index_of_key(("cec", "3931-123F5"))
    busy = model.index(cec.row(), COL_BUSY, cec.parent())
    # VMPROD (one day) under a CEC whose z/OS LPARs cover two days
    assert model.data(busy).endswith("\u25d4") and model.data(busy, Qt.ItemDataRole.BackgroundRole) is not None
    tip = model.data(cec, Qt.ItemDataRole.ToolTipRole)
    assert "partial coverage (88%)" in tip and "LPAR VMPROD" in tip
    zosa = model.index_of_key(("lpar", "3931-123F5", "ZOSA"))
    assert model.data(model.index(zosa.row(), COL_BUSY, zosa.parent()), Qt.ItemDataRole.BackgroundRole) is None
    # partition-only ZOSD: 2 CPs from D0R16, busy in LPARCPU's unit (sum over its CPUs)
    zosd = model.index_of_key(("lpar", "3931-123F5", "ZOSD"))
    assert model.data(model.index(zosd.row(), 1, zosd.parent())) == "2"
    (node,) = [n for r in ws.tree() for n in r.children if n.key == ("lpar", "3931-123F5", "ZOSD")]
    assert node.info["partition_only"] and node.info["busy"] == node.info["partition_busy"]
    assert abs(node.info["busy"] - 2 * node.info["busy_pct"]) < 1e-9     # 2 CPs: sum = 2 x per-CPU average
