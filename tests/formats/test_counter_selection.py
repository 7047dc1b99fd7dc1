"""Reading only the counters a workspace needs (issue 11: the month's decode and memory).

``read_file(path, counters=...)`` must give exactly the columns asked for (those a record carries), with the values
of a full read, the same identity columns, ``sets`` and findings; the workspace's metrics must not change when its
files are read that way; a cached read of some counters must never answer a read of others.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from app import cache as wc
from app.engine import Workspace
from app.formats import kernel, read_bytes, read_file
from app.formats.schema import is_counter_column

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "resources" / "samples"
SMF_SAMPLES = sorted(SAMPLES.glob("*smf113*")) + sorted((SAMPLES / "broken").glob("*smf113*"))
NEED = Workspace(cache=False).counters_needed()


def _counters(df: pd.DataFrame) -> list[str]:
    return [c for c in df.columns if is_counter_column(c)]


@pytest.mark.parametrize("pure", [False, True], ids=["kernel", "numpy"])
@pytest.mark.parametrize("path", SMF_SAMPLES, ids=lambda p: p.name)
def test_selected_counters_equal_the_full_read(path, pure):
    full = read_file(path)
    if pure:
        with kernel.pure():
            part = read_file(path, counters=NEED)
    else:
        part = read_file(path, counters=NEED)
    want = [c for c in _counters(full.samples) if c in NEED]
    assert _counters(part.samples) == want
    ident = [c for c in full.samples.columns if not is_counter_column(c)]
    pd.testing.assert_frame_equal(part.samples[ident], full.samples[ident])      # sets, flags, classes: the same
    pd.testing.assert_frame_equal(part.samples[want], full.samples[want])
    assert part.findings == full.findings and part.records == full.records


def test_selection_keeps_only_what_was_asked_and_never_invents_a_column():
    path = SAMPLES / "after_z16_ZOSB_smf113.vbs.gz"
    full = read_file(path)
    # B0 (cycles) and E143 exist in a z16 record; E999 and C200 do not: they are not added
    part = read_file(path, counters={"B0", "E143", "E999", "C200"})
    assert _counters(part.samples) == ["B0", "E143"]
    assert np.array_equal(part.samples["E143"].to_numpy(), full.samples["E143"].to_numpy())
    assert (part.samples["sets"] == full.samples["sets"]).all()       # the crypto set is still named as present
    none = read_file(path, counters=set())
    assert _counters(none.samples) == [] and len(none.samples) == len(full.samples)


def test_two_record_shapes_with_a_selection():
    """Records of two shapes in one file (a z15 and a z16 LPAR concatenated): the selection applies per shape and
    a counter only one shape carries is 0 in the other's rows, as in a full read (the schema's rule)."""
    a = (SAMPLES / "before_z15_ZOSA_smf113.rdw.gz")
    b = (SAMPLES / "after_z16_ZOSA_smf113.rdw.gz")
    import gzip

    data = gzip.decompress(a.read_bytes()) + gzip.decompress(b.read_bytes())
    full = read_bytes(data, "mixed.smf")
    part = read_bytes(data, "mixed.smf", counters=NEED)
    want = [c for c in _counters(full.samples) if c in NEED]
    assert _counters(part.samples) == want and len(want) < len(_counters(full.samples))
    pd.testing.assert_frame_equal(part.samples[want], full.samples[want])
    assert set(part.samples["machine_type"].astype(str)) == {"8561", "3931"}


def test_workspace_metrics_unchanged_by_reading_only_the_needed_counters():
    paths = [SAMPLES / n for n in ("after_z16_ZOSA_smf113.rdw.gz", "after_z16_ZOSB_smf113.vbs.gz",
                                   "after_VMSYS1_monwrite.mondata.gz")]
    a, b = Workspace(cache=False), Workspace(cache=False)
    a.add_all([read_file(p) for p in paths])
    b.add_all([read_file(p, counters=b.counters_needed()) for p in paths])
    for by in ("lpar", "class", "interval", "cpu"):
        pd.testing.assert_frame_equal(a.metrics(by), b.metrics(by))
    assert [f.code for f in a.findings] == [f.code for f in b.findings]


def test_a_cached_selection_never_answers_another(tmp_path):
    src = tmp_path / "z16.smf.gz"
    shutil.copy(SAMPLES / "after_z16_ZOSB_smf113.vbs.gz", src)
    c = wc.Cache(tmp_path / "cache", background=False)
    part = wc.read_file(src, cache=c, counters=NEED)
    assert c.load_result(src, NEED) is not None
    assert c.load_result(src) is None                      # an entry of some counters is not a read of all
    assert c.load_result(src, {"B0"}) is None
    again = wc.read_file(src, cache=c, counters=set(NEED))  # the same selection in another order: a hit
    assert type(again).__name__ == "CachedReadResult"
    pd.testing.assert_frame_equal(again.samples, part.samples)
    full = wc.read_file(src, cache=c)
    assert len(_counters(full.samples)) > len(_counters(part.samples))
    assert wc.counters_tag(None) == "all" and wc.counters_tag(["B1", "B0"]) == wc.counters_tag({"B0", "B1"})
