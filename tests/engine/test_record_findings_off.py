"""A workspace without the records' own findings (``Workspace(record_findings=False)``, the window's first part
of a file, issue 23): the same intervals, tree and metrics as the normal workspace on the same samples, every
engine finding but those of the records alone (CPUs appearing late or vanishing early, systems moving between
CECs: app/engine/record_checks.py), no pass over the samples making them, and nothing stored in the cache."""

from __future__ import annotations

import pandas as pd
from factory import MIN15, T0, result

from app.engine import Workspace, deltas
from app.engine.catalog import load_formula_sets

SETS = load_formula_sets()
COUNTERS = dict(B0=9 * 10**11, B1=3 * 10**11, B2=10**9, B3=10**9, B4=10**8, B5=10**9, P32=4 * 10**11, P33=10**11)
RECORD_CODES = {"cpu-appeared", "cpu-vanished", "lpar-moved"}


def _records() -> list[dict]:
    """8 fifteen-minute intervals from T0: SYSA's CPU 0 in all, its CPU 1 in the first 4 only (it vanishes),
    its CPU 2 from the third on (it appears late); SYSB's CPU 0 on CEC 3931-ABCDE for the first 4, then on
    3931-FGHIJ (the system moves)."""
    out = []
    for i in range(1, 9):
        for cpu in (0, 1, 2):
            if (cpu == 1 and i > 4) or (cpu == 2 and i < 3):
                continue
            out.append({"lpar": "SYSA", "system": "SYSA", "cpu": cpu, "time": T0 + i * MIN15, "run_start": T0,
                        **COUNTERS})
        cec, serial = ("3931-ABCDE", "ABCDE") if i <= 4 else ("3931-FGHIJ", "FGHIJ")
        out.append({"lpar": "SYSB", "system": "SYSB", "cpu": 0, "cec": cec, "serial": serial,
                    "time": T0 + i * MIN15, "run_start": T0, **COUNTERS})
    return out


def test_no_record_findings_same_intervals(monkeypatch):
    on = Workspace(formula_sets=SETS, cache=False)
    on.add(result(_records()))
    codes = [f.code for f in on.findings]
    assert RECORD_CODES <= set(codes)                  # the normal workspace finds all three

    calls: list[str] = []
    for name in ("cpu_presence", "system_moves"):
        real = getattr(deltas, name)
        monkeypatch.setattr(deltas, name, lambda *a, _real=real, _name=name, **k: (calls.append(_name),
                                                                                   _real(*a, **k))[1])
    off = Workspace(formula_sets=SETS, cache=False, record_findings=False)
    off.add(result(_records()))
    assert calls == []                                 # no pass over the samples for those findings
    # every other finding, in the same order
    assert [f.code for f in off.findings] == [c for c in codes if c not in RECORD_CODES]
    pd.testing.assert_frame_equal(off.intervals, on.intervals, check_exact=True)
    for by in ("lpar_interval", "cpu"):
        pd.testing.assert_frame_equal(off.metrics(by=by, summary=True), on.metrics(by=by, summary=True),
                                      check_exact=True)
    assert [(n.key, n.info.get("n_cpus")) for n in off.tree(deep=False, values=False)] == \
        [(n.key, n.info.get("n_cpus")) for n in on.tree(deep=False, values=False)]


def test_no_record_findings_is_never_cached(tmp_path):
    """Its findings are not the file's: a workspace without them neither stores nor reads a cache entry."""
    from app.cache import Cache

    cache = Cache(tmp_path / "cache")
    r = result(_records())
    r.meta["cache_key"] = "k1"                         # as if read through the workspace cache
    on = Workspace(formula_sets=SETS, cache=cache)
    off = Workspace(formula_sets=SETS, cache=cache, record_findings=False)
    on.add(r)
    off.add(r)
    assert on._iv_cache(on.counters_needed())[1] is not None
    assert off._iv_cache(off.counters_needed()) == (None, None)
