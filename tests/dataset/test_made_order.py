"""The extract's deltas made in the order its intervals' parts are written (app/dataset/adder.py, issue 24):
``_part_order`` lists the rows part by part as ``FileAdder._write`` groups them, so each part's rows are one range
of the block ``DeltaRows.make_all`` makes (a row group's deltas a view); and the copy after the carried samples
holds its counters in blocks of 8 (``_concat_releasing``), each freed once its deltas are made."""

from __future__ import annotations

import numpy as np
import pandas as pd

from app.dataset.adder import _BLOCK, _concat_releasing, _part_order


def _parts(cecs, months) -> pd.DataFrame:
    return pd.DataFrame({"cec": pd.Categorical(cecs), "month": pd.Categorical(months), "x": np.arange(len(cecs))})


def test_rows_part_by_part_as_written():
    f = _parts(["B", "A", "B", "A", "A", "B"], ["2026-01", "2026-02", "2026-01", "2026-01", "2026-02", "2026-02"])
    # parts in (cec, month) order: (A, 01) row 3; (A, 02) rows 1, 4; (B, 01) rows 0, 2; (B, 02) row 5
    np.testing.assert_array_equal(_part_order(f, None), [3, 1, 4, 0, 2, 5])
    # of the rows taken (5, 0, 4, 1): (A, 02) takes 4 then 1 (their order in ``take``), (B, 01) 0, (B, 02) 5
    np.testing.assert_array_equal(_part_order(f, np.array([5, 0, 4, 1])), [4, 1, 0, 5])


def test_each_part_one_range_as_the_writer_takes_it():
    rng = np.random.default_rng(3)
    n = 200
    f = _parts(rng.choice(["A", "B", "C"], n), rng.choice(["2026-01", "2026-02"], n))
    take = np.sort(rng.choice(n, 150, replace=False))
    order = _part_order(f, take)
    pos = np.empty(n, np.int64)
    pos[order] = np.arange(len(order))
    keys = f[["cec", "month"]].iloc[take]
    for idx in keys.groupby(["cec", "month"], observed=True, sort=True).indices.values():
        p = pos[take[idx]]                      # the writer's rows of the part: consecutive places of the block
        assert (np.diff(p) == 1).all()
    assert sorted(order) == sorted(take)


def test_the_copy_after_the_carry_in_blocks_of_8():
    counters = [f"B{i}" for i in range(6)] + [f"E{i}" for i in range(128, 148)]
    vals = np.arange(5 * len(counters), dtype=np.uint64).reshape(5, -1)
    a = pd.concat([pd.DataFrame({"cpu": np.zeros(2, np.int32)}),
                   pd.DataFrame(vals[:2], columns=counters)], axis=1)
    b = pd.concat([pd.DataFrame({"cpu": np.ones(3, np.int32)}),
                   pd.DataFrame(vals[2:], columns=counters)], axis=1)
    out = _concat_releasing(a, [b])
    np.testing.assert_array_equal(out[counters].to_numpy(), vals)
    blocks = [blk for blk in out._mgr.blocks if blk.values.dtype == np.uint64]
    # 26 counters: blocks of 8, 8, 8 and 2, each counter's values adjacent (column order)
    assert sorted(blk.values.shape[0] for blk in blocks) == [2, _BLOCK, _BLOCK, _BLOCK]
    assert all(out[c].to_numpy().flags.c_contiguous for c in counters)
