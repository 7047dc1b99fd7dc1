"""Open the real window on a real X display and check that it drew something: the proof that Qt's xcb platform
and every library it needs are installed (a missing one aborts Qt here, as it would for an analyst).

    xvfb-run -a -s "-screen 0 1440x900x24" python packaging/display_check.py [--out PNG] [FILE...]

``packaging/dev.sh test`` runs it after the test suite (the tests themselves run offscreen).  The window starts
the way ``nestscope`` starts it (``app.cli.main(["gui", ...])`` on the bundled ZOSA sample, Qt platform xcb, not
offscreen); once every file is read, the whole X screen is grabbed (what the X server holds, not what Qt meant
to draw), saved to ``--out`` and checked: not one flat colour, enough distinct colours for a table and a tree.
Exit 0 when the screen shows the window; 1 when it is blank, when Qt chose another platform or when the window
did not finish loading in time; Qt's own abort (exit 134, naming the library) when a library is missing.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SAMPLE = ROOT / "resources" / "samples" / "after_z16_ZOSA_smf113.rdw.gz"
MIN_COLOURS = 24          # a drawn window (text, grid, icons, plot) has hundreds; a blank or one-colour screen 1
MAX_SHARE = 0.97          # no single colour may cover more of the screen than this
GRID_STEP = 4             # look at every 4th pixel of every 4th row
TIMEOUT_S = 300


def blank_reason(image) -> str | None:
    """Why the grabbed screen (a QImage) counts as blank, or None when it shows a drawn window."""
    if image.isNull() or image.width() < 200 or image.height() < 200:
        return f"the grab is empty or tiny ({image.width()}x{image.height()})"
    colours = Counter(image.pixel(x, y) for y in range(0, image.height(), GRID_STEP)
                      for x in range(0, image.width(), GRID_STEP))
    n = sum(colours.values())
    top, count = colours.most_common(1)[0]
    if len(colours) < MIN_COLOURS:
        return f"only {len(colours)} distinct colours on the screen (a drawn window has at least {MIN_COLOURS})"
    if count / n > MAX_SHARE:
        return f"one colour (#{top & 0xFFFFFF:06x}) covers {count / n:.1%} of the screen"
    return None


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="packaging/display_check.py", description=__doc__.splitlines()[0])
    p.add_argument("files", nargs="*", help="files to open (default: the bundled ZOSA sample)")
    p.add_argument("--out", default=str(ROOT / "build" / "display-check.png"), help="where the screenshot goes")
    args = p.parse_args(argv)
    os.environ["QT_QPA_PLATFORM"] = "xcb"          # the real display path, never offscreen
    os.environ.setdefault("NESTSCOPE_CACHE", "0")
    sys.path.insert(0, str(ROOT))
    from app.userdirs import throwaway_settings

    throwaway_settings()
    from PySide6.QtCore import QTimer
    from PySide6.QtWidgets import QApplication

    from app.cli import main as nestscope
    from app.ui.main_window import MainWindow

    qapp = QApplication(sys.argv[:1])               # the one `nestscope gui` takes over (QApplication.instance())
    verdict: dict[str, object] = {"status": 1, "ticks": 0, "settled": 0}

    def look() -> None:
        verdict["ticks"] = int(verdict["ticks"]) + 1
        windows = [w for w in qapp.topLevelWidgets() if isinstance(w, MainWindow) and w.isVisible()]
        if not windows or windows[0].busy():
            if int(verdict["ticks"]) * 0.25 > TIMEOUT_S:
                print(f"display check: the window did not finish loading in {TIMEOUT_S} s", file=sys.stderr)
                qapp.exit(1)
            return
        verdict["settled"] = int(verdict["settled"]) + 1
        if int(verdict["settled"]) < 8:              # two more seconds for the views to draw after the load
            return
        timer.stop()
        out = Path(args.out)
        out.parent.mkdir(parents=True, exist_ok=True)
        shot = qapp.primaryScreen().grabWindow(0)   # the X root window: what the server shows
        shot.save(str(out))
        image = shot.toImage()
        why = blank_reason(image)
        platform = qapp.platformName()
        if platform != "xcb":
            why = f"Qt used the {platform!r} platform, not xcb"
        if why:
            print(f"display check: FAILED: {why} ({out})", file=sys.stderr)
        else:
            print(f"display check: the window drew on {platform} ({image.width()}x{image.height()} screen, "
                  f"{windows[0].width()}x{windows[0].height()} window); screenshot {out}")
        qapp.exit(1 if why else 0)

    timer = QTimer()
    timer.timeout.connect(look)
    timer.start(250)
    return nestscope(["gui", *(args.files or [str(SAMPLE)])])


if __name__ == "__main__":
    raise SystemExit(main())
