"""A chunk's interval rows already in the order their parts are written (one (cec, month) part, or parts whose
rows follow each other: the usual chunk) are made in the frame's own order (``_part_order`` None): no order,
inverse or taken row arrays held beside the deltas (issue 24), the same deltas read as the same views."""

from __future__ import annotations

import numpy as np
import pandas as pd

from app.dataset.adder import _part_order


def _parts(cecs, months) -> pd.DataFrame:
    return pd.DataFrame({"cec": pd.Categorical(cecs), "month": pd.Categorical(months), "x": np.arange(len(cecs))})


def test_own_order_gives_none_else_the_order():
    assert _part_order(_parts(["A"] * 5, ["2026-01"] * 5), None) is None            # one part
    # parts (A, 01) rows 0-1, (A, 02) rows 2-3, (B, 01) row 4: already part by part in (cec, month) order
    assert _part_order(_parts(["A", "A", "A", "A", "B"], ["2026-01", "2026-01", "2026-02", "2026-02", "2026-01"]),
                       None) is None
    # (A, 02) before (A, 01) in the frame: the parts' order is rows 2, 3, 0, 1
    got = _part_order(_parts(["A"] * 4, ["2026-02", "2026-02", "2026-01", "2026-01"]), None)
    np.testing.assert_array_equal(got, [2, 3, 0, 1])
    # rows taken (some rows of the frame not written): always the rows, even in order (make_all's rows to make)
    np.testing.assert_array_equal(_part_order(_parts(["A"] * 4, ["2026-01"] * 4), np.array([0, 2, 3])), [0, 2, 3])
    assert _part_order(_parts([], []), None) is None                                  # no rows
