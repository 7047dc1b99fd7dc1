"""The application layer (app.analysis): reads once, outcomes as data, option names from the caller.

Readers are replaced by stand-ins (no decoding): a counting reader, one that raises, one that returns an unreadable
result, and one that returns two synthetic intervals of LPAR SYSA (tests/engine/factory.py)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT / "tests" / "engine") not in sys.path:
    sys.path.insert(0, str(ROOT / "tests" / "engine"))

from factory import MIN15, T0, result  # noqa: E402

from app import analysis  # noqa: E402
from app.analysis import BAD_REQUEST, NOTHING_READABLE, OK, ComparisonRequest, Message, SideSpec  # noqa: E402
from app.findings import make_finding  # noqa: E402
from app.formats.schema import ReadResult, empty_samples  # noqa: E402


def sysa(path) -> ReadResult:
    # two CPUs of LPAR SYSA, two 15-minute intervals (B0 = cycles, B1 = instructions: CPI 2.5)
    recs = [dict(time=T0 + MIN15 * i, cpu=cpu, B0=2_250_000_000_000, B1=900_000_000_000) for i in (1, 2)
            for cpu in (0, 1)]
    return result(recs, file=str(path))


@pytest.fixture
def reader(monkeypatch):
    """Replace the decoder; ``calls`` lists the paths read, ``behave[path]`` is "ok", "raise" or "empty"."""
    calls: list[str] = []
    behave: dict[str, str] = {}

    def read(path, *a, **kw):
        calls.append(str(path))
        how = behave.get(str(path), "ok")
        if how == "raise":
            raise RuntimeError("boom")
        if how == "empty":
            f = make_finding(str(path), 0, "error", "not-cpu-mf", "no CPU MF records", "")
            return ReadResult(file=str(path), kind="unknown", framing="none", records={}, samples=empty_samples(),
                              findings=[f])
        return sysa(path)

    monkeypatch.setattr("app.formats.read_file", read)
    return calls, behave


def test_read_files_reads_each_path_once_per_cache_and_keeps_the_problem_as_data(reader):
    calls, behave = reader
    behave["bad.smf"] = "raise"
    cache: dict = {}
    first = analysis.read_files(["a.smf", "bad.smf", "a.smf"], cache)
    second = analysis.read_files(["bad.smf", "a.smf"], cache)
    assert calls == ["a.smf", "bad.smf"]                       # a.smf twice and in both calls: read once
    assert [r.file for r in first.results] == ["a.smf", "a.smf"] and first.readable
    assert first.messages == [Message("problem", "bad.smf: cannot be read (RuntimeError: boom)")]
    assert second.messages == []                               # said once per cache
    behave["x.smf"] = "raise"
    stand_in = analysis.read_files(["x.smf"], failed=lambda p, e: analysis.failed_result(p, f"({e})", "hint"))
    (f,) = stand_in.results[0].findings
    assert (f.code, f.severity, "(boom)" in f.message, stand_in.readable) == ("reader-failure", "error", True, False)


def test_message_lines_are_the_cli_lines():
    assert Message("error", "--lpar X: not in the files").line() == "error: --lpar X: not in the files"
    assert Message("note", "n").line() == "note: n" and Message("problem", "p").line() == "p"
    assert Message("finding", "f", "warning").line() == "[warning] f"


def test_a_bad_window_is_refused_before_any_read_and_named_in_the_callers_words(reader):
    calls, _ = reader
    req = ComparisonRequest(SideSpec(["a.smf"], start=T0 + MIN15, end=T0), SideSpec(["b.smf"]))
    got = analysis.build_comparison(req, names=lambda side, what: f"{side.title()} {what}")
    assert (got.comparison, got.code, calls) == (None, BAD_REQUEST, [])
    assert got.messages == [Message("error", f"Before from {T0 + MIN15} is not before Before to {T0}")]


def test_nothing_readable_on_one_side_gives_its_findings_then_the_summary(reader):
    _, behave = reader
    behave["b.smf"] = "empty"
    got = analysis.build_comparison(ComparisonRequest(SideSpec(["a.smf"]), SideSpec(["b.smf"])))
    assert got.code == NOTHING_READABLE and got.comparison is None
    finding, summary = got.messages
    assert (finding.kind, finding.severity, "no CPU MF records" in finding.text) == ("finding", "error", True)
    assert summary == Message("problem", "nothing readable was found in the after files")


def test_an_unknown_lpar_names_the_option_and_the_lpars_there_are(reader):
    got = analysis.build_comparison(ComparisonRequest(SideSpec(["a.smf"]), SideSpec(["b.smf"], lpars=["nope"])))
    assert got.code == BAD_REQUEST
    assert got.messages == [Message("error", "--after-lpar nope: not in the after files (LPARs with counters: SYSA)")]


def test_a_comparison_of_one_file_against_itself_reads_it_once(reader):
    calls, _ = reader
    got = analysis.build_comparison(ComparisonRequest(SideSpec(["a.smf"], lpars=["sysa"]), SideSpec(["a.smf"])))
    assert got.code == OK and calls == ["a.smf"] and got.messages == []
    assert got.comparison.before.nodes == (("lpar", "3931-ABCDE", "SYSA"),)   # the name matched case-blind
    assert got.comparison.before.workspace is got.comparison.after.workspace   # one Workspace per file set


def test_plan_export_reads_the_comparisons_files_once_and_resolves_the_lpars(reader):
    calls, _ = reader
    spec = analysis.ExportSpec([], lpars=["SysA"], comparison=ComparisonRequest(SideSpec(["a.smf"]),
                                                                                  SideSpec(["b.smf"])))
    plan = analysis.plan_export(spec)
    assert plan.code == OK and sorted(calls) == ["a.smf", "b.smf"]      # each once (the sides read side by side)
    assert plan.request.nodes == (("lpar", "3931-ABCDE", "SYSA"),) and plan.request.comparison is not None
    also = analysis.plan_export(analysis.ExportSpec(["a.smf"], also_hours="22-06", target="x.csv"))
    assert also.code == BAD_REQUEST and also.messages[0].line() == \
        "error: --also-shift adds slides to a deck (.pptx), not to x.csv"


def test_window_request_per_what():
    class Side:
        def __init__(self, nodes):
            self.nodes = nodes

    class Cmp:
        before, after = Side((("lpar", "C", "A"),)), Side((("lpar", "C", "A"), ("lpar", "C", "B")))

    with pytest.raises(analysis.NoComparison):
        analysis.window_request("ws", "comparison", "lpar")
    r = analysis.window_request("ws", "comparison", "class", " T ", comparison=Cmp(), describe={"before": "x"})
    assert (r.nodes, r.by, r.title, r.subtitle) == ((("lpar", "C", "A"), ("lpar", "C", "B")), "class", "T",
                                                   "before: x  |  after: ")
    t = analysis.window_request("ws", "table", "lpar", "", start=1, end=2, nodes=())
    assert (t.nodes, t.start, t.end, t.title) == (None, 1, 2, "CPU MF analysis")


def _both_ways(monkeypatch, req):
    """build_comparison of ``req`` with one thread, then two: (outcome, thread names of the reads) each."""
    import threading

    import app.analysis.comparison as AC

    out = []
    made = AC.make_workspace
    names: list[tuple[str, str]] = []

    def make(results, *a, **kw):
        names.append(("workspace " + ",".join(r.file for r in results), threading.current_thread().name))
        return made(results, *a, **kw)
    monkeypatch.setattr(AC, "make_workspace", make)
    for n in ("1", "2"):
        monkeypatch.setenv("NESTSCOPE_THREADS", n)
        names.clear()
        got = AC.build_comparison(req)
        out.append((got, sorted(names)))
    return out


def test_the_sides_are_read_side_by_side_with_the_same_outcome(reader, monkeypatch):
    """Two threads: the before side's workspace is made on the second thread while this one reads the after side;
    the comparison and the messages are those of one thread (and the same on main)."""
    import threading

    (one, one_names), (two, two_names) = _both_ways(monkeypatch, ComparisonRequest(SideSpec(["a.smf"]),
                                                                                    SideSpec(["b.smf"])))
    main = threading.main_thread().name
    assert one_names == [("workspace a.smf", main), ("workspace b.smf", main)]
    assert two_names == [("workspace a.smf", "nestscope-before-side"), ("workspace b.smf", main)]
    assert one.code == two.code == OK and one.messages == two.messages
    assert one.comparison.table.equals(two.comparison.table) and len(two.comparison.table)


def test_side_by_side_reads_keep_the_messages_and_their_order(reader, monkeypatch, tmp_path):
    """A before file whose reader raises, an unreadable after file: the same messages in the same order with two
    threads as with one; a bad formula file is refused the same way (made on the second thread, said here)."""
    _, behave = reader
    behave["bad.smf"], behave["b.smf"] = "raise", "empty"
    (one, _), (two, _) = _both_ways(monkeypatch, ComparisonRequest(SideSpec(["bad.smf", "a.smf"]),
                                                                    SideSpec(["b.smf"])))
    assert one.code == two.code == NOTHING_READABLE and one.messages == two.messages
    assert two.messages[0] == Message("problem", "bad.smf: cannot be read (RuntimeError: boom)")
    bad = tmp_path / "f.json"
    bad.write_text("{not json")
    (one, _), (two, _) = _both_ways(monkeypatch, ComparisonRequest(SideSpec(["a.smf"]), SideSpec(["c.smf"]),
                                                                    formulas=str(bad)))
    assert one.code == two.code == BAD_REQUEST and one.messages == two.messages
    assert two.messages[-1].text.startswith("--formulas ")


def test_sides_sharing_a_file_stay_on_one_thread(reader, monkeypatch):
    calls, _ = reader
    (_, _), (two, names) = _both_ways(monkeypatch, ComparisonRequest(SideSpec(["a.smf"]),
                                                                      SideSpec(["a.smf", "b.smf"])))
    import threading

    assert two.code == OK and {t for _w, t in names} == {threading.main_thread().name}
    assert calls[-2:] == ["a.smf", "b.smf"]        # a.smf read once, for both sides
