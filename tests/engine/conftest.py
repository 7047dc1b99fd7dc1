"""Engine tests: make the repository root and this folder importable."""

from __future__ import annotations

import sys
from pathlib import Path

for _p in (str(Path(__file__).resolve().parents[2]), str(Path(__file__).resolve().parent)):
    if _p not in sys.path:
        sys.path.insert(0, _p)
