"""``nestscope export --out FILE.png|.svg``: pictures of the window's timelines and Compare charts from the CLI.

The window is built offscreen in this process (pytest-qt's QApplication), except in the one end-to-end run
through ``python -m app`` that also checks the process ends cleanly.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from app.cli import main

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "resources" / "samples"
B = str(SAMPLES / "before_z15_ZOSA_smf113.rdw.gz")
A = str(SAMPLES / "after_z16_ZOSA_smf113.rdw.gz")
SVG = "{http://www.w3.org/2000/svg}"

pytestmark = pytest.mark.skipif(not Path(A).exists() or not Path(B).exists(), reason="samples not generated")


@pytest.fixture
def cli(qapp, tmp_path, monkeypatch):
    """Run ``nestscope export ...`` in this process with its own settings file; returns the exit code."""
    monkeypatch.setenv("NESTSCOPE_SETTINGS_FILE", str(tmp_path / "settings.ini"))

    def run(*argv: str) -> int:
        return main(["export", *argv])

    return run


def _image(path: Path):
    from PySide6.QtGui import QImage

    img = QImage(str(path))
    assert not img.isNull(), f"{path} does not load as an image"
    return img


def _colours(img, step: int = 4) -> int:
    """Distinct colours on a grid of every ``step``-th pixel (a blank or one-colour picture has 1 or 2)."""
    return len({img.pixel(x, y) for x in range(0, img.width(), step) for y in range(0, img.height(), step)})


def _no_leftovers(folder: Path) -> None:
    assert [p.name for p in folder.iterdir() if p.name.startswith(".nestscope-")] == []


def test_png_of_the_sample_timelines(cli, tmp_path, capsys):
    out = tmp_path / "timelines.png"
    assert cli(A, "--out", str(out), "--size", "1200x700") == 0
    err = capsys.readouterr().err
    assert f"wrote {out} (1200x700, timelines of" in err and "ZOSA" in err
    img = _image(out)
    assert (img.width(), img.height()) == (1200, 700)
    # plots in six node/part colours, antialiased lines, stacked sourcing areas, text: far more than a blank page
    assert _colours(img) > 100
    _no_leftovers(tmp_path)


def test_svg_of_one_metric_has_paths_in_picture_coordinates(cli, tmp_path, capsys):
    out = tmp_path / "cpi.svg"
    assert cli(A, "--out", str(out), "--metric", "CPI", "--size", "1000x600") == 0
    root = ET.parse(out).getroot()
    assert root.tag == f"{SVG}svg" and root.get("viewBox") == "0 0 1000 600"
    paths = [e.get("d", "") for e in root.iter(f"{SVG}path")] + [e.get("points", "") for e in
                                                                  root.iter(f"{SVG}polyline")]
    assert len(paths) > 20
    texts = " ".join("".join(e.itertext()) for e in root.iter(f"{SVG}text"))
    assert "cycles / instr" in texts          # the CPI plot's value axis label (timeline_plots.UNITS["cpi"])
    assert "Est Finite CPI" in texts          # its legend
    assert "Interval end (UTC)" in texts      # the time axis label, shown under the one plot
    # every coordinate is a picture pixel: x of a time drawn as epoch seconds (~1.8e9, six digits = 3 hours)
    # would be far outside 0..1000; 2 px of slack for strokes at the edges
    numbers = [float(v) for d in paths for v in re.findall(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?", d)]
    assert numbers and min(numbers) > -2 and max(numbers) < 1002
    # and no group puts them back through a large transform
    for g in root.iter(f"{SVG}g"):
        m = re.match(r"matrix\(([^)]*)\)", g.get("transform", "") or "")
        if m:
            assert all(abs(float(v)) < 1e4 for v in m.group(1).split(","))


def test_svg_zoomed_window_is_clipped_to_the_plot(cli, tmp_path):
    out = tmp_path / "l1mp.svg"
    assert cli(A, "--out", str(out), "--metric", "L1MP", "--size", "800x500",
               "--from", "2026-11-02T06:00Z", "--to", "2026-11-02T18:00Z") == 0
    root = ET.parse(out).getroot()
    numbers = [float(v) for e in root.iter(f"{SVG}path")
               for v in re.findall(r"-?\d+(?:\.\d+)?(?:e[-+]?\d+)?", e.get("d", ""))]
    # the curve spans two days; zoomed to 12 hours, the rest would run 3 picture widths past the plot if not clipped
    assert numbers and min(numbers) > -2 and max(numbers) < 802


def test_comparison_picture(cli, tmp_path, capsys):
    out = tmp_path / "compare.png"
    assert cli("--before", B, "--after", A, "--out", str(out), "--size", "1024x700") == 0
    err = capsys.readouterr().err
    assert "comparison: CPI waterfall of ZOSA and overlaid CPI timelines" in err   # the first pair by default
    img = _image(out)
    assert (img.width(), img.height()) == (1024, 700)
    assert _colours(img) > 100
    # the waterfall's bars are there: the total bars' colour (compare_tab.BAR_TOTAL #5b7db1) covers many pixels
    bars = sum(1 for x in range(0, 1024, 4) for y in range(0, 700, 4) if img.pixel(x, y) & 0xFFFFFF == 0x5B7DB1)
    assert bars > 500


def test_comparison_svg_of_one_overlaid_metric(cli, tmp_path):
    out = tmp_path / "l1mp_overlay.svg"
    assert cli("--before", B, "--after", A, "--out", str(out), "--metric", "l1mp", "--size", "900x500") == 0
    root = ET.parse(out).getroot()
    texts = " ".join("".join(e.itertext()) for e in root.iter(f"{SVG}text"))
    assert "before (dashed), after (solid)" in texts and "hours from the selection" in texts
    assert "before: ZOSA" in texts and "after: ZOSA" in texts


def test_refuses_an_input_file_as_target(cli, tmp_path, capsys):
    src = tmp_path / "data.png"              # SMF data under a picture name
    shutil.copy(A, src)
    data = src.read_bytes()
    assert cli(str(src), "--out", str(src)) == 2
    assert "input file" in capsys.readouterr().err
    assert src.read_bytes() == data
    _no_leftovers(tmp_path)


def test_unreadable_input_exit_3_names_the_file(cli, tmp_path, capsys):
    junk = tmp_path / "junk.smf"
    junk.write_bytes(b"hello, not SMF" * 10)
    out = tmp_path / "x.png"
    assert cli(str(junk), "--out", str(out)) == 3
    err = capsys.readouterr().err
    assert str(junk) in err and "nothing readable" in err and "Traceback" not in err
    assert not out.exists()
    _no_leftovers(tmp_path)


def test_missing_file_is_named(cli, tmp_path, capsys):
    assert cli(str(tmp_path / "nope.smf"), "--out", str(tmp_path / "x.svg")) == 3
    assert "nope.smf: no such file" in capsys.readouterr().err


@pytest.mark.parametrize("argv, text", [
    (["--size", "10x10"], "--size"),
    (["--metric", "waterfall"], "--metric waterfall"),       # a comparison chart, not a timeline
    (["--hours", "08-17"], "--hours"),                       # the timelines show every interval
    (["--from", "2026-11-03T00:00Z", "--to", "2026-11-02T00:00Z"], "not before"),
])
def test_usage_errors_before_any_reading(cli, tmp_path, capsys, argv, text):
    out = tmp_path / "x.png"
    assert cli(A, "--out", str(out), *argv) == 2
    assert text in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_unknown_lpar_is_a_usage_error(cli, tmp_path, capsys):
    assert cli(A, "--out", str(tmp_path / "x.png"), "--lpar", "NOPE") == 2
    err = capsys.readouterr().err
    assert "--lpar NOPE" in err and "ZOSA" in err        # the LPARs there are
    assert not (tmp_path / "x.png").exists()


def test_end_to_end_process(tmp_path):
    """``python -m app export`` as a user runs it: written, exit 0, and the process ends cleanly."""
    out = tmp_path / "t.png"
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", NESTSCOPE_SETTINGS_FILE=str(tmp_path / "s.ini"))
    proc = subprocess.run([sys.executable, "-m", "app", "export", A, "--out", str(out), "--size", "800x450",
                           "--by", "class"], check=False, cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "ZOSA / GCP" in proc.stderr and "Traceback" not in proc.stderr
    # Qt's offscreen platform noise is not passed on (snapshot.QuietQt): the command says what it wrote, only
    assert "propagateSizeHints" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"wrote {out} (800x450, timelines of"), proc.stderr
    img = _image(out)
    assert (img.width(), img.height()) == (800, 450)


def _text_positions(root) -> dict[str, tuple[float, float]]:
    """Picture position of every SVG text: its x, y through the enclosing group's matrix."""
    out = {}
    for g in root.iter(f"{SVG}g"):
        m = re.match(r"matrix\(([^)]*)\)", g.get("transform", "") or "")
        a, b, c, d, e, f = (float(v) for v in m.group(1).split(",")) if m else (1, 0, 0, 1, 0, 0)
        for t in g.findall(f"{SVG}text"):
            x, y = float(t.get("x", 0)), float(t.get("y", 0))
            out["".join(t.itertext()).strip()] = (a * x + c * y + e, b * x + d * y + f)
    return out


def test_tall_panel_is_fitted_into_a_short_picture(cli, tmp_path):
    """Eight CPUs: four stacked sourcing plots and four more, taller than 700 px at their on-screen minimum
    heights (the window scrolls); the picture fits them, so the time axis and the overview are in it."""
    zosb = SAMPLES / "after_z16_ZOSB_smf113.vbs.gz"
    out = tmp_path / "cpus.svg"
    assert cli(str(zosb), "--out", str(out), "--by", "cpu", "--size", "1024x700") == 0
    pos = _text_positions(ET.parse(out).getroot())
    # 110 px per plot x 3 + 125 x 4 sourcing + 46 time axis + 90 overview = 966 px > 700 without the fit
    for label in ("Interval end (UTC)", "Whole range (UTC)", "LPARCPU %"):
        assert label in pos and 0 < pos[label][1] < 700, (label, pos.get(label))


def test_waterfall_picture_shows_the_engines_decomposition(cli, tmp_path):
    """The waterfall's bar labels are the engine's numbers (app.engine.compare, the same files read here)."""
    from app.engine import Workspace
    from app.engine.compare import Selection, compare
    from app.formats import read_file

    out = tmp_path / "wf.svg"
    assert cli("--before", B, "--after", A, "--out", str(out), "--metric", "waterfall", "--size", "1000x600") == 0
    sides = {}
    for name, path in (("before", B), ("after", A)):
        ws = Workspace()
        ws.add_all([read_file(path)])
        sides[name] = Selection(ws, name=name)
    wf = compare(sides["before"], sides["after"], by="lpar").waterfall()
    # totals as 3.966, steps signed as -0.224 (compare_tab.draw_waterfall)
    want = [f"{v:.3f}" if k == "total" else f"{v:+.3f}" for k, v in zip(wf["kind"], wf["value"])]
    texts = set(_text_positions(ET.parse(out).getroot()))
    assert len(want) == 5 and set(want) <= texts, (want, sorted(texts))
    # the parts add up: CPI before + steps = CPI after (to the 3 decimals shown, within rounding of 3 steps)
    total = float(want[0]) + sum(float(v) for v in want[1:-1])
    assert abs(total - float(want[-1])) <= 0.002


def test_files_from_the_cache_given_another_way(cli, tmp_path, monkeypatch, capsys):
    """A cached file's result names it as it was first given (here relative to the repository); opened again by
    its absolute path from another folder, the comparison still finds each side's LPARs."""
    monkeypatch.setenv("NESTSCOPE_CACHE", "1")
    monkeypatch.setenv("NESTSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("NESTSCOPE_CACHE_BACKGROUND", "0")      # entries written before the command ends
    monkeypatch.chdir(ROOT)
    rel_b, rel_a = (os.path.relpath(p, ROOT) for p in (B, A))
    assert cli("--before", rel_b, "--after", rel_a, "--out", str(tmp_path / "first.png"), "--size", "640x400") == 0
    assert any((tmp_path / "cache").iterdir())
    monkeypatch.chdir(tmp_path)
    out = tmp_path / "again.png"
    assert cli("--before", B, "--after", A, "--out", str(out), "--size", "640x400") == 0, capsys.readouterr().err
    assert _image(out).width() == 640


def test_pair_chooses_the_waterfall(cli, tmp_path, capsys):
    """``--pair ZOSB``: the waterfall of the second pair, with the engine's numbers of that pair."""
    from app.engine import Workspace
    from app.engine.compare import Selection, compare
    from app.formats import read_file

    zosb_b, zosb_a = str(SAMPLES / "before_z15_ZOSB_smf113.rdw.gz"), str(SAMPLES / "after_z16_ZOSB_smf113.vbs.gz")
    out = tmp_path / "wf_zosb.svg"
    assert cli("--before", B, zosb_b, "--after", A, zosb_a, "--out", str(out), "--metric", "waterfall",
               "--pair", "zosb", "--size", "1000x600") == 0
    assert "comparison: CPI waterfall of ZOSB" in capsys.readouterr().err
    sides = {}
    for name, paths in (("before", (B, zosb_b)), ("after", (A, zosb_a))):
        ws = Workspace()
        ws.add_all([read_file(p) for p in paths])
        sides[name] = Selection(ws, name=name)
    cmp = compare(sides["before"], sides["after"], by="lpar")
    assert cmp.pairs == ["ZOSA", "ZOSB"]
    texts = set(_text_positions(ET.parse(out).getroot()))
    assert any(t.startswith("CPI change: ZOSB") for t in texts), sorted(texts)
    for pair, shown in (("ZOSB", True), ("ZOSA", False)):   # ZOSB's bar values are there, ZOSA's are not
        wf = cmp.waterfall(pair)
        want = {f"{v:.3f}" if k == "total" else f"{v:+.3f}" for k, v in zip(wf["kind"], wf["value"])}
        assert (want <= texts) is shown, (pair, want, sorted(texts))


def test_pair_usage_errors(cli, tmp_path, capsys):
    out = tmp_path / "x.png"
    assert cli("--before", B, "--after", A, "--out", str(out), "--pair", "NOPE", "--size", "640x400") == 2
    err = capsys.readouterr().err
    assert "--pair NOPE: not a pair of this comparison (pairs: ZOSA)" in err and not out.exists()
    assert cli(A, "--out", str(out), "--pair", "ZOSA") == 2                       # no comparison: no waterfall
    assert "--pair" in capsys.readouterr().err
    assert cli("--before", B, "--after", A, "--out", str(out), "--pair", "ZOSA", "--metric", "L1MP") == 2
    assert "overlaid timelines only" in capsys.readouterr().err
    assert cli("--before", B, "--after", A, "--out", str(tmp_path / "x.csv"), "--pair", "ZOSA") == 2
    assert "--pair is for pictures" in capsys.readouterr().err
    _no_leftovers(tmp_path)


def test_quiet_qt_drops_the_offscreen_noise_only(qapp, capsys):
    """The filter drops Qt's "does not support propagateSizeHints()" and passes every other message to stderr."""
    from PySide6.QtCore import qInstallMessageHandler, qWarning

    from app.commands.snapshot import QuietQt

    saved = qInstallMessageHandler(None)        # pytest-qt's capture handler, put back below
    quiet = QuietQt().install()
    try:
        qWarning("This plugin does not support propagateSizeHints()")
        qWarning("a real warning: QPainter::begin: Paint device returned engine == 0")
    finally:
        quiet.remove()
        qInstallMessageHandler(saved)
    err = capsys.readouterr().err
    assert err == "a real warning: QPainter::begin: Paint device returned engine == 0\n"
    assert quiet.dropped == 1 and not quiet.installed
