"""The one-way layering of the package, and the test tree's own hygiene."""

from __future__ import annotations

import ast
import json
import os
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


# What a fresh process loads when it imports a layer: each probe below runs in a process of its own that has
# loaded no module of app, nor Qt.  One parent process imports the third-party libraries every layer needs
# (numpy, pandas, pyarrow: none of them loads Qt or app, which the parent checks) and forks a child per probe,
# so each child pays only for app's own modules, not a new interpreter and pandas each time (where the platform
# cannot fork: a new interpreter per probe).
_FORBIDDEN_IN_PARENT = ("app", "PySide6", "pyqtgraph", "shiboken6")
_RUNNER = f"""
import io, json, os, sys, contextlib, traceback
probes = json.loads(sys.stdin.read())
if hasattr(os, "fork"):
    import numpy, pandas, pyarrow, pyarrow.parquet
    assert not [m for m in sys.modules if m.split(".")[0] in {_FORBIDDEN_IN_PARENT!r}]
out = {{}}
for name, code in probes.items():
    if not hasattr(os, "fork"):
        import subprocess
        r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
        out[name] = [r.returncode, r.stdout + r.stderr]
        continue
    rd, wr = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(rd)
        buf, rc = io.StringIO(), 0
        try:
            with contextlib.redirect_stdout(buf):
                exec(code, {{"__name__": "__main__"}})
        except BaseException:
            buf.write(traceback.format_exc())
            rc = 1
        os.write(wr, buf.getvalue().encode())
        os._exit(rc)
    os.close(wr)
    with os.fdopen(rd, "rb") as f:
        text = f.read().decode()
    out[name] = [os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), text]
print(json.dumps(out))
"""


def _run_probes(probes: dict[str, str]) -> dict[str, tuple[int, str]]:
    """Each probe's (exit code, what it printed), each run as the code of a fresh process (above)."""
    out = subprocess.run([sys.executable, "-c", _RUNNER], input=json.dumps(probes), capture_output=True, text=True,
                         check=True)
    return {k: (rc, text) for k, (rc, text) in json.loads(out.stdout).items()}


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


def _loads_front_ends(layer: str) -> str:
    # importing every module of the layer (its lazy imports are covered by the AST walk above)
    mods = sorted(".".join(p.relative_to(APP.parent).with_suffix("").parts).removesuffix(".__init__")
                  for p in (APP / layer).rglob("*.py"))
    return ("import importlib, sys\n"
            f"for m in {mods!r}:\n    importlib.import_module(m)\n"
            "print(sorted(m for m in sys.modules if m.startswith(('app.commands', 'app.ui'))))")


def _qt_loaded_by(pkg: str) -> str:
    return (f"import sys, {pkg}; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('PySide6', 'pyqtgraph', 'app.ui')))")


QT_FREE = ["app.formats", "app.engine", "app.sample", "app.analysis", "app.export", "app.cache", "app.commands.report",
           "app.commands.info"]
PROBES = {**{f"front-ends:{layer}": _loads_front_ends(layer) for layer in BELOW_FRONT_ENDS},
          **{f"qt:{pkg}": _qt_loaded_by(pkg) for pkg in QT_FREE},
          "engine:formats": ("import sys, app.formats, app.formats.smf113, app.formats.monwrite; "
                             "print('app.engine' in sys.modules)"),
          # the probes must be able to fail: a probe that loads the window sees Qt and app.ui loaded
          "qt:app.ui": "import sys, app.ui.main_window; print(sorted({m.split('.')[0] for m in sys.modules} & {'PySide6', 'app'}))"}


@pytest.fixture(scope="module")
def probed() -> dict[str, str]:
    """What each probe printed (each in a fresh process: :func:`_run_probes`); a probe that raised fails here."""
    out = _run_probes(PROBES)
    assert {k: text for k, (rc, text) in out.items() if rc != 0} == {}
    return {k: text.strip() for k, (_rc, text) in out.items()}


def test_the_probes_see_what_a_layer_loads(probed):
    assert probed["qt:app.ui"] == "['PySide6', 'app']"


@pytest.mark.parametrize("layer", BELOW_FRONT_ENDS)
def test_no_layer_below_the_front_ends_loads_them(layer, probed):
    assert probed[f"front-ends:{layer}"] == "[]"


def test_one_formatter_for_table_values():
    # value formatting for tables lives in app.engine.layout; the CLI's and the exports' names are that function
    from app.commands import compare, report
    from app.engine.layout import display
    from app.export import tables

    assert compare._fmt is display and report._fmt is display and tables.display is display
    assert display(None, 1) == "n/a" and display(float("nan"), 2) == "n/a"
    assert display(-0.004, 2) == "0.00"                   # rounds to zero: never "-0.00"
    assert display(1.25, 3, sign=True) == "+1.250" and display(-1.25, 1, sign=True) == "-1.2"   # 1.25 -> 1.2 (half to even)


@pytest.mark.parametrize("pkg", QT_FREE)
def test_layer_is_qt_free(pkg, probed):
    assert probed[f"qt:{pkg}"] == "[]"


def test_formats_never_import_the_engine(probed):
    assert probed["engine:formats"] == "False"


def test_test_module_names_are_unique():
    # pytest's default import mode cannot hold two test modules of the same name
    names = Counter(p.name for p in Path(__file__).parent.rglob("test_*.py"))
    assert [n for n, k in names.items() if k > 1] == []
