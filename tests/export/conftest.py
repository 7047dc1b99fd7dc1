"""Fixtures of the export tests: the z15 (before) and z16 (after) ZOSA sample files, read once."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.engine import Workspace
from app.engine.compare import Selection, compare
from app.formats import read_file

SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "samples"
BEFORE = SAMPLES / "before_z15_ZOSA_smf113.rdw.gz"
AFTER = SAMPLES / "after_z16_ZOSA_smf113.rdw.gz"


@pytest.fixture(scope="session")
def read_results():
    return read_file(BEFORE), read_file(AFTER)


@pytest.fixture(scope="session")
def joint(read_results):
    """One workspace holding both files (the same LPAR name on two CECs)."""
    ws = Workspace()
    ws.add_all(list(read_results))
    return ws


@pytest.fixture(scope="session")
def comparison(read_results):
    b, a = Workspace(), Workspace()
    b.add(read_results[0])
    a.add(read_results[1])
    return compare(Selection(b, name="before"), Selection(a, name="after"), by="lpar")
