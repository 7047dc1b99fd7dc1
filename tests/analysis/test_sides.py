"""The workspace of a comparison export's own files taken from the two sides (app.analysis.sides): what a deck or a
comparison CSV reads of it (provenance, left-out counts, default zone, files) equals the combined Workspace's, for
any window and shift; anything else is the combined Workspace's, made only then; and the cases where the sides
cannot stand for the files together (a CEC on both sides, the same files in another order) make it as before."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.analysis import ExportRequest, make_workspace
from app.analysis.sides import SidesWorkspace, export_workspace
from app.engine.compare import Selection, compare
from app.engine.shift import make_shift
from app.export.provenance import provenance

BEFORE = ["before_z15_ZOSA_smf113.rdw.gz", "before_z15_ZOSB_smf113.rdw.gz"]
AFTER = ["after_z16_ZOSA_smf113.rdw.gz"]


@pytest.fixture(scope="module")
def sides(sample_result):
    """(before results, after results, before ws, after ws, comparison, combined ws): z15 against z16 (no CEC on
    both sides)."""
    rb = [sample_result(n) for n in BEFORE]
    ra = [sample_result(n) for n in AFTER]
    wb, wa = make_workspace(rb, None), make_workspace(ra, None)
    c = compare(Selection(wb, name="before"), Selection(wa, name="after"))
    return rb, ra, wb, wa, c, make_workspace(rb + ra, None)


def view_of(sides) -> tuple[SidesWorkspace, list]:
    rb, ra, _wb, _wa, c, combined = sides
    made = []

    def make():
        made.append(1)
        return combined
    view = export_workspace(rb + ra, c, make, None, False)
    assert isinstance(view, SidesWorkspace)
    return view, made


def test_the_view_tells_what_the_combined_workspace_tells_without_making_it(sides):
    view, made = view_of(sides)
    combined = sides[5]
    assert [id(r) for r in view.files] == [id(r) for r in combined.files]          # the export's order
    assert view.left_out_count() == combined.left_out_count()
    assert view.default_zone() == combined.zones.default()
    assert view.formula_versions() == combined.formula_versions()
    assert view.formula_sets.keys() == combined.formula_sets.keys()
    assert view.keep_implausible is False and view.formula_file is None
    # both sides' rows: as many as the combined workspace has (no CEC on both sides: every row is one side's)
    assert len(view.intervals) == len(combined.intervals) > 0
    for shift in (None, make_shift("08-17", "mon-fri"), make_shift("22-06", None, tz="local")):
        req = dict(by="lpar", shift=shift, comparison=sides[4])
        assert provenance(ExportRequest(view, **req)) == provenance(ExportRequest(combined, **req))
    assert made == []                        # nothing above needed the combined workspace


def test_a_utc_provenance_reads_the_sides_rows_without_both_in_one_frame(sides):
    """Without a zone to read, the provenance's window and implausible counts of the view are the sides' rows'
    (min of the first, max of the last, sums): the rows of both sides are never put in one frame."""
    view, made = view_of(sides)
    combined = sides[5]
    for shift in (None, make_shift("08-17", "mon-fri"), make_shift("22-06", None)):
        req = dict(by="lpar", shift=shift, comparison=sides[4])
        doc = provenance(ExportRequest(view, **req))
        assert doc == provenance(ExportRequest(combined, **req))
        assert doc["window"]["first"] is not None
    assert view._iv is None and made == []    # neither the rows together nor the combined workspace were made
    # a zoned shift reads the offsets of the rows together: those are made then
    req = dict(by="lpar", shift=make_shift("22-06", None, tz="local"), comparison=sides[4])
    assert provenance(ExportRequest(view, **req)) == provenance(ExportRequest(combined, **req))
    assert view._iv is not None


def test_anything_else_is_asked_of_the_combined_workspace_made_once(sides):
    view, made = view_of(sides)
    combined = sides[5]
    pd.testing.assert_frame_equal(view.metrics(by="lpar"), combined.metrics(by="lpar"))
    assert view.counters == combined.counters
    assert made == [1]                       # made on the first question beyond the provenance, then kept


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(hours=st.tuples(st.integers(0, 23), st.integers(0, 23)).filter(lambda h: h[0] != h[1]),
       days=st.sets(st.sampled_from(["mon", "tue", "wed", "thu", "fri", "sat", "sun"]), min_size=1),
       tz=st.sampled_from(["utc", "local", "America/New_York"]),
       cut=st.tuples(st.floats(0, 1), st.floats(0, 1)))
def test_provenance_of_the_view_equals_the_combined_one_for_any_window_and_shift(sides, hours, days, tz, cut):
    view, _ = view_of(sides)
    combined = sides[5]
    iv = combined.intervals
    lo, hi = iv["interval_end"].min(), iv["interval_end"].max()
    a, b = sorted(cut)
    start, end = lo + (hi - lo) * a, lo + (hi - lo) * b
    shift = make_shift(f"{hours[0]:02d}-{hours[1]:02d}", ",".join(sorted(days)), tz=tz)
    req = dict(by="lpar", start=start, end=end, shift=shift, comparison=sides[4])
    assert provenance(ExportRequest(view, **req)) == provenance(ExportRequest(combined, **req))


def test_the_same_files_on_both_sides_are_that_side_s_workspace_in_the_same_order_only(sample_result):
    rs = [sample_result(n) for n in BEFORE]
    ws = make_workspace(rs, None)
    c = compare(Selection(ws, shift=make_shift("08-17", None), name="before"),
                Selection(ws, shift=make_shift("22-06", None), name="after"))
    assert export_workspace(rs, c, lambda: None, None, False) is ws
    assert export_workspace(rs[::-1], c, lambda: None, None, False) is None     # another order: the files' own
    assert export_workspace(rs, c, lambda: None, None, True) is None            # implausible rows kept: another


def test_a_cec_on_both_sides_makes_the_combined_workspace(sample_result):
    ra, rb = sample_result(BEFORE[0]), sample_result(BEFORE[1])       # ZOSA and ZOSB of one z15
    wa, wb = make_workspace([ra], None), make_workspace([rb], None)
    c = compare(Selection(wa, name="before"), Selection(wb, name="after"))
    assert export_workspace([ra, rb], c, lambda: None, None, False) is None
