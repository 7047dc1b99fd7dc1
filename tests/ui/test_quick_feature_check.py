"""Issue 23 (session 10): the start replaces PySide6's per-import check "does this module mention PySide6?"
(``shibokensupport.feature._mod_uses_pyside``, through ``inspect.getsource``) with a read of the module's file as
bytes (app.ui.quick_feature_check): the same answer for every module the window imports."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

SAME_ANSWERS = """
import json, sys
import PySide6.QtCore
import shibokensupport.feature as feature
import app.ui
real = feature._mod_uses_pyside
app.ui.quick_feature_check()
quick = feature._mod_uses_pyside
import pandas, pyqtgraph, app.ui.main_window, app.engine, app.analysis, app.formats, app.cache
mods = [m for m in list(sys.modules.values()) if getattr(m, "__file__", None)]
print(json.dumps({"replaced": quick is not real, "modules": len(mods),
                  "users": sum(bool(real(m)) for m in mods),
                  "differ": [m.__name__ for m in mods if bool(real(m)) != bool(quick(m))]}))
"""


def test_quick_check_gives_pysides_answers():
    root = Path(__file__).resolve().parents[2]
    p = subprocess.run([sys.executable, "-c", SAME_ANSWERS], capture_output=True, text=True, cwd=root, timeout=300,
                       env=dict(os.environ, QT_QPA_PLATFORM="offscreen", PYTHONPATH=str(root)))
    assert p.returncode == 0, p.stderr
    got = json.loads(p.stdout.strip().splitlines()[-1])
    assert got["replaced"]
    assert got["modules"] > 300 and got["users"] > 10    # both answers occur (app.ui's modules, pyqtgraph's say yes)
    assert got["differ"] == []


def test_quick_check_leaves_unknown_internals_alone(monkeypatch):
    import app.ui

    monkeypatch.setitem(sys.modules, "shibokensupport.feature", type(sys)("shibokensupport.feature"))
    app.ui.quick_feature_check()          # no _mod_uses_pyside / pyside_feature_dict there: nothing done
    assert not hasattr(sys.modules["shibokensupport.feature"], "_mod_uses_pyside")
