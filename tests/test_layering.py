"""The one-way layering of the package, and the test tree's own hygiene."""

from __future__ import annotations

import ast
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

APP = Path(__file__).resolve().parents[1] / "app"
# the layers below the front ends: none of them may reach up into the CLI (app.commands) or the window (app.ui)
BELOW_FRONT_ENDS = ("formats", "engine", "export", "analysis", "cache", "dataset")
FRONT_ENDS = ("app.commands", "app.ui")


def imported_modules(path: Path, package: str | None = None) -> set[str]:
    """Every module a source file imports, at its top or inside a function (relative imports made absolute
    against ``package``, by default the file's own)."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    if package is None:
        package = ".".join(path.relative_to(APP.parent).with_suffix("").parts[:-1])
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            out.add(mod)
            out.update(f"{mod}.{a.name}" for a in node.names)   # ``from app import ui`` imports app.ui
    return out


def _reaches(mod: str, tops: tuple[str, ...]) -> bool:
    return any(mod == t or mod.startswith(t + ".") for t in tops)


@pytest.mark.parametrize("layer", BELOW_FRONT_ENDS)
def test_no_layer_below_the_front_ends_imports_them_in_its_source(layer):
    files = sorted((APP / layer).rglob("*.py"))
    assert files, f"app/{layer} has no source files"
    bad = {str(f.relative_to(APP)): sorted(m for m in imported_modules(f) if _reaches(m, FRONT_ENDS)) for f in files}
    assert {k: v for k, v in bad.items() if v} == {}


def test_the_ast_walk_sees_an_upward_import(tmp_path):
    # the check above must be able to fail: an import inside a function, a relative one and ``from app import ui``
    f = tmp_path / "probe.py"
    f.write_text("def f():\n    from ..ui import window_files\n    from app import commands\n", encoding="utf-8")
    mods = imported_modules(f, package="app.analysis")
    assert _reaches("app.ui.window_files", FRONT_ENDS) and "app.ui" in mods and "app.commands" in mods


@pytest.mark.parametrize("layer", BELOW_FRONT_ENDS)
def test_no_layer_below_the_front_ends_loads_them(layer):
    # importing every module of the layer (its lazy imports are covered by the AST walk above) loads no front end
    mods = sorted(".".join(p.relative_to(APP.parent).with_suffix("").parts).removesuffix(".__init__")
                  for p in (APP / layer).rglob("*.py"))
    code = ("import importlib, sys\n"
            f"for m in {mods!r}:\n    importlib.import_module(m)\n"
            "print(sorted(m for m in sys.modules if m.startswith(('app.commands', 'app.ui'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_one_formatter_for_table_values():
    # value formatting for tables lives in app.engine.layout; the CLI's and the exports' names are that function
    from app.commands import compare, report
    from app.engine.layout import display
    from app.export import tables

    assert compare._fmt is display and report._fmt is display and tables.display is display
    assert display(None, 1) == "n/a" and display(float("nan"), 2) == "n/a"
    assert display(-0.004, 2) == "0.00"                   # rounds to zero: never "-0.00"
    assert display(1.25, 3, sign=True) == "+1.250" and display(-1.25, 1, sign=True) == "-1.2"   # 1.25 -> 1.2 (half to even)


@pytest.mark.parametrize("pkg", ["app.formats", "app.engine", "app.sample", "app.analysis", "app.export",
                                 "app.cache", "app.commands.report", "app.commands.info"])
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
