"""A workspace without coverage notes (``Workspace(coverage_notes=False)``, the window's first part of a file): its
tree's nodes carry no ``coverage_pct`` / ``coverage_note`` and no coverage pass runs over its intervals, while
every other value of the tree equals the normal workspace's on the same samples."""

from __future__ import annotations

import math

import pandas as pd
import pytest
from factory import MIN15, T0, result

from app.engine import Workspace, partitions
from app.engine.catalog import load_formula_sets

SETS = load_formula_sets()


def _records() -> list[dict]:
    """One CEC, LPAR SYSA with 8 fifteen-minute delta intervals from T0 and SYSB with 4 (its data ends after an
    hour), two CPUs each."""
    out = []
    for lpar, n in (("SYSA", 8), ("SYSB", 4)):
        for i in range(1, n + 1):
            for cpu in (0, 1):
                out.append({"lpar": lpar, "system": lpar, "cpu": cpu, "time": T0 + i * MIN15, "run_start": T0,
                            "B0": 9 * 10**11, "B1": 3 * 10**11, "B2": 10**9, "B3": 10**9, "B4": 10**8,
                            "B5": 10**9, "P32": 4 * 10**11, "P33": 10**11})
    return out


def _flat(nodes: list, drop: tuple[str, ...] = ()) -> list[tuple]:
    """Every node depth first as (key, level, label, info without ``drop``), NaN written as 'nan' (comparable)."""
    out = []
    for n in nodes:
        info = {k: ("nan" if isinstance(v, float) and math.isnan(v) else v)
                for k, v in n.info.items() if k not in drop}
        out.append((n.key, n.level, n.label, info))
        out.extend(_flat(n.children, drop))
    return out


@pytest.mark.parametrize("deep", [True, False])
def test_tree_without_coverage_notes(monkeypatch, deep):
    seen: list[int] = []
    real = partitions.coverage

    def counted(iv, level, *a, **k):           # the rows each coverage call passes over
        seen.append(len(iv))
        return real(iv, level, *a, **k)
    monkeypatch.setattr(partitions, "coverage", counted)

    on = Workspace(formula_sets=SETS, cache=False)
    on.add(result(_records()))
    want = on.tree(deep=deep)
    assert max(seen) == 24                     # the normal tree's notes pass over the 8 x 2 + 4 x 2 interval rows
    # SYSA covers 2 h of the CEC's 2 h, SYSB 1 h: (1 + 0.5) / 2 = 75 %, the note names SYSB's span
    cec = want[0]
    assert cec.info["coverage_pct"] == 75.0
    assert "LPAR SYSB 2026-01-05 08:00..2026-01-05 09:00" in cec.info["coverage_note"]

    seen.clear()
    off = Workspace(formula_sets=SETS, cache=False, coverage_notes=False)
    off.add(result(_records()))
    got = off.tree(deep=deep)
    assert not any(seen)                       # no pass over any interval row
    flat = _flat(got)
    # the CEC, its 2 LPARs and its GCP pool; deep: each LPAR's GCP class and its 2 CPUs too
    assert [lv for _, lv, *_ in flat] == (["cec", "lpar", "class", "cpu", "cpu", "lpar", "class", "cpu", "cpu", "pool"]
                                          if deep else ["cec", "lpar", "lpar", "pool"])
    assert all("coverage_pct" not in info and "coverage_note" not in info for *_, info in flat)
    assert flat == _flat(want, drop=("coverage_pct", "coverage_note"))

    cov = off.coverage_frames()
    for lv in ("cec", "lpar"):            # the level's columns, no row
        assert not len(cov[lv]) and list(cov[lv].columns) == list(on.coverage_frames()[lv].columns)
    pd.testing.assert_frame_equal(off.tree_ident(), on.tree_ident())
