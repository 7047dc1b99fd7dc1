"""Test-wide setup: Qt runs offscreen everywhere (CI has no display)."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
# tests never use the user's workspace cache (tests/engine/test_cache*.py give their own Cache folder)
os.environ.setdefault("NESTSCOPE_CACHE", "0")


def pytest_sessionfinish(session, exitstatus):
    """Release the clipboard's QMimeData while the QApplication still lives (see app.ui)."""
    import sys

    if "app.ui" in sys.modules:
        sys.modules["app.ui"].release_clipboard()
