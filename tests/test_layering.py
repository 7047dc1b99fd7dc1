"""The one-way layering of the package, and the test tree's own hygiene."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest


@pytest.mark.parametrize("pkg", ["app.formats", "app.engine", "app.sample", "app.commands.report",
                                 "app.commands.info"])
def test_layer_is_qt_free(pkg):
    code = (f"import sys, {pkg}; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph', 'app.ui')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_formats_never_import_the_engine():
    code = "import sys, app.formats, app.formats.smf113, app.formats.monwrite; print('app.engine' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_test_module_names_are_unique():
    # pytest's default import mode cannot hold two test modules of the same name
    names = Counter(p.name for p in Path(__file__).parent.rglob("test_*.py"))
    assert [n for n, k in names.items() if k > 1] == []
