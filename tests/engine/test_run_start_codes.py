"""The later collection runs (``new-run`` findings) found on the category codes (app/engine/record_checks.py)
are those of the frame's way (groupby, sort by LPAR and run_start, each LPAR's first run left out), in the same
order: random LPARs (categories in a shuffled order, so the sort is by the categories' order, not the text) and
run starts."""

import numpy as np
import pandas as pd
from hypothesis import given, settings, strategies as st

from app.engine import record_checks as rc
from app.engine.keys import LPAR_KEY, Cols, firsts_lasts, row_key, time_order

_NAMES = ["SYSB", "SYSA", "SYSC"]


def _cols(rows, perm):
    """Samples of (lpar index, run start day, time) rows as engine columns; one CEC, ``perm`` orders the LPAR
    names' categories."""
    cats = pd.CategoricalDtype([_NAMES[i] for i in perm])
    lp = np.array([perm.index(r[0]) for r in rows], np.int8)       # the code of each row's name
    day = np.datetime64("2026-01-01T00:00", "ns")
    a = {"cec": np.zeros(len(rows), np.int8), "lpar": lp, "system": lp.copy(),
         "run_start": np.array([day + np.timedelta64(r[1], "D") for r in rows], "datetime64[ns]"),
         "time": np.array([day + np.timedelta64(r[2], "m") for r in rows], "datetime64[ns]"),
         "source": np.zeros(len(rows), np.int8), "offset": np.arange(len(rows), dtype=np.int64) * 100}
    return Cols(a, {"cec": pd.CategoricalDtype(["C1"]), "lpar": cats, "system": cats,
                    "source": pd.CategoricalDtype(["f.smf"])})


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(0, 2), st.integers(0, 3), st.integers(0, 500)), min_size=1, max_size=40),
       st.permutations([0, 1, 2]))
def test_codes_way_is_the_frames_way(rows, perm):
    S = _cols(rows, list(perm))
    order = time_order(S["time"])
    got = rc.run_start_changes(S, order)
    firsts = order[firsts_lasts(*row_key(S, [*LPAR_KEY, "run_start"], order))]
    want = rc._later_runs(S.frame(firsts, [*LPAR_KEY, "run_start", "source", "offset", "time"]))
    assert [(f.offset, f.message) for f in got] == [(f.offset, f.message) for f in want]
    # by hand: every (LPAR, run start) but each LPAR's earliest run start is one finding
    runs = {(r[0], r[1]) for r in rows}
    assert len(got) == len(runs) - len({r[0] for r in rows})


def test_two_runs_of_one_lpar_one_finding_at_the_later_runs_first_record():
    # SYSA: run of day 0 (times 5, 9), run of day 1 (times 20, 30): one finding, at the record of time 20
    S = _cols([(1, 0, 5), (1, 1, 30), (1, 0, 9), (1, 1, 20), (0, 0, 1)], [0, 1, 2])
    got = rc.run_start_changes(S, time_order(S["time"]))
    assert [(f.code, f.offset) for f in got] == [("new-run", 300)]
