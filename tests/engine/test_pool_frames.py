"""A selected CEC pool's rows are sliced from the workspace's prepared pool frame (``Workspace.prepare_pools``):
they must be the rows computed for the selected pools alone (the reference below: ``views.pools`` over the
pools' CECs, the selected pools picked, as ``node_rows`` computed them before the frames were prepared)."""

from __future__ import annotations

import pandas as pd
import pytest

from app.engine import Workspace
from app.engine.metrics import with_summary
from app.engine.views import pools

CEC = "3931-123F5"


def reference(ws, keys, by, start=None, end=None, summary=False):
    per_interval = by not in ("class", "lpar", "cec", "cpu_window")
    cecs = [("cec", c) for c in dict.fromkeys(k[1] for k in keys)]
    want = {(str(k[1]), str(k[2])) for k in keys}

    def pick(frame, is_summary):
        keep = [(str(c), str(t)) in want for c, t in zip(frame["cec"], frame["class"], strict=True)]
        return frame.loc[keep].assign(summary=is_summary)

    body = pick(pools(ws, start, end, nodes=cecs, per_interval=per_interval), False)
    window = pick(pools(ws, start, end, nodes=cecs), True) if summary and per_interval else None
    return with_summary(body, window, "class_interval" if per_interval else "class").reset_index(drop=True)


@pytest.fixture(scope="module")
def ws(sample_result):
    w = Workspace(cache=False)
    w.add_all([sample_result("after_z16_ZOSA_smf113.rdw.gz"), sample_result("after_z16_ZOSB_smf113.vbs.gz"),
               sample_result("after_VMSYS1_monwrite.mondata.gz")])
    return w


@pytest.mark.parametrize("by", ["class_interval", "class"])
@pytest.mark.parametrize("summary", [True, False])
@pytest.mark.parametrize("keys", [[("pool", CEC, "zIIP")], [("pool", CEC, "IFL"), ("pool", CEC, "GCP")],
                                  [("pool", CEC, "GCP"), ("pool", CEC, "ICF")]])   # no ICF in the samples
def test_a_prepared_pool_selection_is_the_pools_own_rows(ws, by, summary, keys):
    ws._mcache.clear()
    assert ws.prepare_pools() and ws.prepared("pool")
    got = ws.metrics(by=by, nodes=keys, summary=summary)
    want = reference(ws, keys, by, summary=summary)
    assert len(got) > 0
    pd.testing.assert_frame_equal(got.reset_index(drop=True), want, check_exact=True)
    # GCP is ZOSA's and ZOSB's general CPs: two LPARs in every row (ICF has none: no rows)
    assert set(got["class"]) == {k[2] for k in keys} - {"ICF"}


def test_pools_in_a_window_and_prepared_with_the_levels(sample_result):
    w = Workspace(cache=False)
    w.add_all([sample_result("after_z16_ZOSA_smf113.rdw.gz"), sample_result("after_VMSYS1_monwrite.mondata.gz")])
    ends = w.intervals["interval_end"]
    start, end = ends.min() + pd.Timedelta(hours=2), ends.max() - pd.Timedelta(hours=3)
    assert not w.prepared("pool", start, end)
    assert w.prepare_levels(("lpar_interval", "pool"), start, end)
    assert w.prepared("pool", start, end) and w.prepared("lpar_interval", start, end) and not w.prepared("pool")
    keys = [("pool", CEC, "IFL")]
    got = w.metrics(by="class_interval", start=start, end=end, nodes=keys, summary=True)
    pd.testing.assert_frame_equal(got.reset_index(drop=True),
                                  reference(w, keys, "class_interval", start, end, True), check_exact=True)
    # every row in the window: interval ends in (start, end]
    body = got[~got["summary"]]
    assert body["interval_end"].min() > start and body["interval_end"].max() <= end


def test_no_intervals_no_pools():
    w = Workspace(cache=False)
    assert not w.prepare_pools() and not w.prepared("pool")
