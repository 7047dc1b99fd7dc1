"""The comparison deck tells the before/after story (issue 25): order, summary numbers, waterfall from zero,
two colour families, configuration changes, the deck's own properties, title placeholders and per-slide notes."""

from __future__ import annotations

import datetime
from pathlib import Path

import pandas as pd
import pytest

from app.engine import Workspace
from app.engine.compare import Selection, compare
from app.export import ExportRequest, export
from app.export import story
from app.formats import read_file

SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "samples"


def _title(slide) -> str:
    return slide.shapes.title.text_frame.text


@pytest.fixture(scope="module")
def zosb(tmp_path_factory, sample_result):
    """ZOSB z15 -> z16 with the z16 CEC's partition data (VMSYS1): ZOSB's CP weight rises 300 -> 450 at
    2026-11-02 14:00 inside the after window (the sample model's weight change)."""
    from pptx import Presentation

    b, a = Workspace(), Workspace()
    b.add(sample_result("before_z15_ZOSB_smf113.rdw.gz"))      # decoded once per test process (tests/conftest.py)
    a.add_all([sample_result("after_z16_ZOSB_smf113.vbs.gz"), sample_result("after_VMSYS1_monwrite.mondata.gz")])
    c = compare(Selection(b, name="before"), Selection(a, nodes=(("lpar", "3931-123F5", "ZOSB"),), name="after"))
    path = tmp_path_factory.mktemp("story") / "deck.pptx"
    res = export(ExportRequest(a, comparison=c), str(path))
    return c, res, Presentation(str(path)), path


def test_change_text_is_relative_to_the_before_value():
    # 8.2 -> 7.5: (7.5 - 8.2) / 8.2 = -8.54 %: "8.5 % fewer", not the 9 % of 1 - 1/1.093
    assert story.change_text(8.2, 7.5) == "8.5 % fewer cycles per instruction"
    assert story.change_text(2.0, 2.5) == "25.0 % more cycles per instruction"
    assert story.change_text(0.0, 1.0) == "no change can be computed"


def test_span_text_in_the_sites_words():
    assert story.span_text("2026-10-05T00:00", "2026-11-04T00:00") == "5 Oct - 4 Nov 2026 (UTC)"
    assert story.span_text("2026-12-30T08:00", "2027-01-02T17:30") == "30 Dec 2026 08:00 - 2 Jan 2027 17:30 (UTC)"


def test_story_order(zosb):
    _, _, prs, _ = zosb
    titles = [_title(s) for s in prs.slides]
    assert titles[0] == "ZOSB: z15 -> z16"                 # the default title from the data
    assert titles[1] == "Executive summary"
    assert titles[2].startswith("Before and after per LPAR")
    i_wf = titles.index("CPI change ZOSB: what moved it")
    i_ov = titles.index("CPI before (dashed) and after")
    i_cfg = titles.index("LPAR configuration before and after")
    i_before = titles.index("Before: Summary per LPAR")
    i_after = titles.index("After: Summary per LPAR")
    assert 2 < i_wf < i_ov < i_cfg < i_before < i_after
    assert titles[-1] == "Appendix: provenance"
    assert "Before: L1MP" in titles[i_before:i_after] and "After: L1MP" in titles[i_after:]


def test_executive_summary_numbers_match_the_engine(zosb):
    c, _, prs, _ = zosb
    s = next(s for s in prs.slides if _title(s) == "Executive summary")
    text = " ".join(sh.text_frame.text for sh in s.shapes if sh.has_text_frame)
    d = c.cpi.iloc[0]
    b, a = float(d["cpi_before"]), float(d["cpi_after"])
    pct = abs((a - b) / b * 100)
    assert f"CPI {b:.2f} -> {a:.2f}" in text and f"{pct:.1f} % fewer cycles per instruction" in text
    assert f"ratio before/after {b / a:.2f}" in text
    assert f"instruction complexity {d['d_instr_cmplx']:+.3f}" in text and f"finite cache {d['d_finite']:+.3f}" in text
    t = c.table.set_index("row")
    assert f"LPARCPU {t.loc['before', 'LPARCPU']:.1f} -> {t.loc['after', 'LPARCPU']:.1f}" in text
    # the caveats that apply: sourcing formulas differ, RNI status, ZOSB's weight change inside the after window
    assert "Caveats" in text and "L3P" in text and "RNI" in text
    assert "CP weight 300 -> 450" in text


def test_configuration_flags_the_weight_change(zosb):
    c, _, prs, _ = zosb
    cfg = story.configuration(c).set_index("side")
    assert cfg.loc["after", "weights"] == "CP 450, zIIP 200" and cfg.loc["after", "processors"] == "CP 6, zIIP 2"
    assert cfg.loc["after", "changes"] == "CP weight 300 -> 450 at 2 Nov 2026 14:00 UTC"
    assert cfg.loc["before", "changes"] == "none"
    s = next(s for s in prs.slides if _title(s) == "LPAR configuration before and after")
    (tbl,) = [sh.table for sh in s.shapes if sh.has_table]
    assert [tbl.cell(0, j).text for j in range(3)] == ["Side", "LPAR", "CEC"]
    assert tbl.cell(2, 7).text == "CP weight 300 -> 450 at 2 Nov 2026 14:00 UTC"


def test_waterfall_value_axis_from_zero(zosb):
    _, _, prs, _ = zosb
    s = next(s for s in prs.slides if _title(s).startswith("CPI change ZOSB"))
    (ch,) = [sh.chart for sh in s.shapes if sh.has_chart]
    assert ch.value_axis.minimum_scale == 0.0


def test_overlays_in_two_colour_families(zosb):
    _, _, prs, _ = zosb
    for name in ("CPI", "LPARCPU"):
        s = next(s for s in prs.slides if _title(s) == f"{name} before (dashed) and after")
        (ch,) = [sh.chart for sh in s.shapes if sh.has_chart]
        colours = {ser.name: str(ser.format.line.color.rgb) for ser in ch.plots[0].series}
        assert len(colours) == 2 and len(set(colours.values())) == 2


def test_comparison_table_keeps_every_column(zosb):
    c, _, prs, _ = zosb
    heads = []
    for s in prs.slides:
        if _title(s).startswith("Before and after per LPAR"):
            for sh in s.shapes:
                if sh.has_table:
                    heads += [sh.table.cell(0, j).text.replace("\n", " ") for j in range(len(sh.table.columns))]
    for col in ("Eff GHz", "Workload Hint", "LPARCPU", "CPI"):
        assert col in heads
    # one footnote mark per marked column, and RNI with its status
    assert any(h.startswith("L3P ") for h in heads) and any(h.startswith("Rel Nest Intensity ") for h in heads)
    text = " ".join(sh.text_frame.text for s in prs.slides if _title(s).startswith("Before and after")
                    for sh in s.shapes if sh.has_text_frame)
    assert "Rel Nest Intensity: z15: unconfirmed coefficients; z16: no formula" in text


def test_core_properties_are_the_decks_own(zosb):
    _, _, prs, path = zosb
    cp = prs.core_properties
    assert cp.title == "ZOSB: z15 -> z16"
    assert cp.last_modified_by != "Steve Canny" and cp.author != "Steve Canny"
    now = datetime.datetime.now(datetime.timezone.utc).replace(tzinfo=None)
    assert abs((now - cp.created).total_seconds()) < 600 and abs((now - cp.modified).total_seconds()) < 600
    import zipfile

    with zipfile.ZipFile(path) as z:
        app = z.read("docProps/app.xml").decode()
    assert "<Application>NestScope" in app and "Microsoft" not in app


def test_every_slide_has_a_title_placeholder_and_its_own_notes(zosb):
    _, _, prs, _ = zosb
    firsts = []
    for s in prs.slides:
        assert s.shapes.title is not None and s.shapes.title.is_placeholder and _title(s)
        notes = s.notes_slide.notes_text_frame.text
        assert "Made with NestScope" in notes
        first = notes.split("\n")[0]
        assert not first.startswith("Made with")           # what this slide shows comes first
        firsts.append(first)
    assert len(set(firsts)) >= 8


def test_also_shift_sets_each_sides_shift_against_the_night(tmp_path):
    """--also-shift 22-06 with --hours 08-17 --days mon-fri: one slide per side, the rows of each shift equal that
    side's metrics computed with the shift on its own."""
    from pptx import Presentation

    from app.cli import main
    from app.engine.shift import make_shift, shifted_metrics

    b, a = SAMPLES / "before_z15_ZOSA_smf113.rdw.gz", SAMPLES / "after_z16_ZOSA_smf113.rdw.gz"
    out = tmp_path / "shifts.pptx"
    assert main(["export", "--before", str(b), "--after", str(a), "--hours", "08-17", "--days", "mon-fri",
                 "--also-shift", "22-06", "--out", str(out)]) == 0
    prs = Presentation(str(out))
    titles = [_title(s) for s in prs.slides]
    assert "Before: 08:00-17:00 against 22:00-06:00 (UTC, Mon-Fri)" in titles
    assert "After: 08:00-17:00 against 22:00-06:00 (UTC, Mon-Fri)" in titles
    ws = Workspace()
    ws.add(read_file(a))
    night = shifted_metrics(ws, by="lpar", shift=make_shift("22-06", "mon-fri")).iloc[0]
    prime = shifted_metrics(ws, by="lpar", shift=make_shift("08-17", "mon-fri")).iloc[0]
    s = prs.slides[titles.index("After: 08:00-17:00 against 22:00-06:00 (UTC, Mon-Fri)")]
    tbl = [sh.table for sh in s.shapes if sh.has_table][0]
    rows = {tbl.cell(i, 0).text: tbl.cell(i, 2).text for i in range(1, len(tbl.rows))}
    assert rows["08:00-17:00"] == f"{prime['CPI']:.2f}" and rows["22:00-06:00"] == f"{night['CPI']:.2f}"
    assert rows["ratio"] == f"{prime['CPI'] / night['CPI']:.2f}"
    # a deck-only option
    assert main(["export", str(a), "--also-shift", "22-06", "--out", str(tmp_path / "x.csv")]) == 2


def test_caveat_names_intervals_left_out_as_implausible(tmp_path):
    """A z16 file with one flipped counter byte (tests/engine/damaged.py, issue 20's case) on the after side: the
    summary's caveats say one CPU-interval of the after side is left out."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "engine"))
    from damaged import samples as damaged_samples
    from damaged import write as damaged_write

    s = damaged_samples()
    clean, _ = damaged_write(tmp_path, s)
    bad, _ = damaged_write(tmp_path, s, (10, "E149"))
    b, a = Workspace(), Workspace()
    b.add(read_file(clean))
    a.add(read_file(bad))
    c = compare(Selection(b, name="before"), Selection(a, name="after"))
    lines = story.caveats(c)
    assert any(ln.startswith("1 CPU-interval(s) of the after side are left out") for ln in lines)
    assert not any("of the before side are left out" in ln for ln in lines)


def test_side_changes_computed_once_read_alike(zosb):
    """configuration() and caveats() given side_changes() say what they say when they compute the changes
    themselves (the deck computes them once for both)."""
    c = zosb[0]
    ch = story.side_changes(c)
    assert ch[0] == {} and any("CP weight 300 -> 450" in x for v in ch[1].values() for x in v)
    pd.testing.assert_frame_equal(story.configuration(c, ch), story.configuration(c))
    assert story.caveats(c, ch) == story.caveats(c)


@pytest.mark.parametrize("hours, days", [(None, None), ("08-17", "mon-fri"), ("22-06", None)])
def test_class_cpu_counts_are_the_class_interval_rows(zosb, hours, days):
    """The CPUs with counters per class and interval that the configuration changes read: the same as the n_cpus of
    the selection's class_interval metrics rows (window, nodes, shift alike), without summing the counters."""
    import dataclasses

    from app.engine.shift import make_shift

    c = zosb[0]
    for sel in (c.before, c.after,
                dataclasses.replace(c.after, nodes=None, start=pd.Timestamp("2026-11-03"))):   # a window, no nodes
        sel = dataclasses.replace(sel, shift=make_shift(hours, days))
        keys = ["cec", "lpar", "class", "interval_end"]
        got = story.class_cpu_counts(sel)
        ref = sel.metrics("class_interval")[keys + ["n_cpus"]]
        assert len(got) == len(ref) > 0
        got = got.astype({k: str for k in keys[:3]}).sort_values(keys, ignore_index=True)
        ref = ref.astype({k: str for k in keys[:3]}).sort_values(keys, ignore_index=True)
        assert got["interval_end"].tolist() == ref["interval_end"].tolist()
        assert got["n_cpus"].astype(int).tolist() == ref["n_cpus"].astype(int).tolist()
        assert got[keys[:3]].equals(ref[keys[:3]])
