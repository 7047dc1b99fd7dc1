"""Test-wide setup: Qt runs offscreen everywhere (CI has no display)."""

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
