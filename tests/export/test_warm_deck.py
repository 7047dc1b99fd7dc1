"""warm_deck (app/export/__init__.py): a deck's imports loaded on a thread while a command reads its files."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

PROBE = r"""
import sys, threading
import app.export as E
before = [m for m in E._DECK_MODULES if m in sys.modules]
E.warm_deck()
(th,) = [t for t in threading.enumerate() if t.name == "nestscope-deck-imports"]
th.join(60)
print(len(before), sorted(set(E._DECK_MODULES) - set(sys.modules)), th.daemon)
"""


def test_warm_deck_imports_the_deck_writer_on_a_daemon_thread():
    """In a fresh process none of the deck's modules is loaded after importing app.export; once the thread has
    run, every one is (python-pptx, XlsxWriter, the deck's own modules), and the thread never holds the exit."""
    out = subprocess.run([sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["0", "[]", "True"]
