"""A narrow query looks at its own partitions only (issue 24): the leftovers of killed extracts it names and the
compaction records it applies are those of the CEC x month directories it reads; ``dataset check`` still lists
every partition's.  The directories are recorded by wrapping ``os.scandir`` and ``os.listdir`` (what ``os.walk``,
``Path.iterdir`` and ``Path.rglob`` list through)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from _fleet_helpers import SAMPLES, fresh_copy, two_cec_dataset
from app.cli import main
from app.dataset import Dataset, compact
from app.dataset.integrity import leftover_finding
from app.dataset.plan import scope
from app.dataset.query import QuerySpec, _months_between

Z16 = SAMPLES[2]        # CEC 3931-123F5: intervals ending 2026-11-02 00:15 .. 2026-11-04 00:00 (UTC)
Z15 = SAMPLES[5]        # CEC 8561-45A12: intervals ending in 2026-10
OWN = ("3931-123F5", "2026-11")
NARROW = ["--where", "cec = '3931-123F5'", "--from", "2026-11-01T00:00:00", "--to", "2026-11-30T00:00:00"]
FOREIGN = [(f"9999-{k:05d}", f"2026-{m:02d}") for k in range(4) for m in range(1, 13)] + \
          [("3931-123F5", "2026-12"), ("3931-123F5", "2026-10"), ("8561-45A12", "2026-11")]   # 51 partitions


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    return two_cec_dataset(tmp_path_factory.mktemp("leftovers") / "ds")


@pytest.fixture
def ds(pristine, tmp_path):
    return fresh_copy(pristine, tmp_path)


def _leftover(root: Path, table: str, cec: str, month: str, name: str = "part-killed.parquet") -> Path:
    d = root / table / f"cec={cec}" / f"month={month}"
    d.mkdir(parents=True, exist_ok=True)
    p = d / name
    p.write_bytes(b"PAR1")
    t = time.time() - 2 * 3600          # two hours old: a leftover (a running extract's part is younger)
    os.utime(p, (t, t))
    return p


def _fill_foreign(root: Path) -> list[Path]:
    return [_leftover(root, t, c, m) for c, m in FOREIGN for t in ("samples", "intervals")]


@pytest.fixture
def visited(monkeypatch):
    seen: list[str] = []
    scandir, listdir = os.scandir, os.listdir

    def rec_scandir(path="."):
        seen.append(os.fspath(path))
        return scandir(path)

    def rec_listdir(path="."):
        seen.append(os.fspath(path))
        return listdir(path)

    monkeypatch.setattr(os, "scandir", rec_scandir)
    monkeypatch.setattr(os, "listdir", rec_listdir)
    return seen


def _partition_of(path: str, root: Path) -> tuple[str | None, str | None] | None:
    """(cec, month) of a directory inside a table's tree (None for a part not given), None outside them."""
    if not os.path.abspath(path).startswith(str(root) + os.sep):
        return None
    rel = Path(os.path.abspath(path)).relative_to(root).parts
    if not rel or rel[0] not in ("samples", "intervals", "partitions"):
        return None
    cec = rel[1][4:] if len(rel) > 1 else None
    month = rel[2][6:] if len(rel) > 2 else None
    return cec, month


def _run(argv, capsys):
    assert main(argv) == 0
    got = capsys.readouterr()
    return got.out, [ln for ln in got.err.splitlines() if ln.strip()]


def test_narrow_query_lists_only_its_partitions(ds, visited, capsys):
    own = _leftover(ds.root, "intervals", *OWN)
    _fill_foreign(ds.root)
    visited.clear()
    out, err = _run(["query", str(ds.root), "--format", "csv", "--by", "lpar", *NARROW], capsys)
    parts = [p for p in (_partition_of(v, ds.root) for v in visited) if p is not None]
    # the table directories themselves are not listed (the CEC is named), nor any other CEC's or month's
    assert all(c == OWN[0] and m in (None, OWN[1]) for c, m in parts), sorted(set(visited))
    assert (OWN[0], OWN[1]) in parts                  # its own partition was looked at
    # the 102 foreign leftovers are not its business: one leftover, its own, named as before
    assert err == [f"nestscope query: info: {leftover_finding(ds.root, [own]).message}"]
    assert "3931-123F5" in out and "8561-45A12" not in out


def test_same_answer_and_messages_as_a_whole_walk_for_its_own_leftover(ds, capsys):
    clean_out, clean_err = _run(["query", str(ds.root), "--format", "csv", "--by", "lpar", *NARROW], capsys)
    assert clean_err == []
    left = [_leftover(ds.root, "intervals", *OWN), _leftover(ds.root, "samples", *OWN),
            _leftover(ds.root, "intervals", *OWN, name=".tmp-part-x.parquet")]
    whole = Dataset(ds.root).leftovers()               # the walk of every directory, as before this change
    assert sorted(whole) == sorted(left)
    out, err = _run(["query", str(ds.root), "--format", "csv", "--by", "lpar", *NARROW], capsys)
    assert out == clean_out                            # leftovers change no answer
    assert err == [f"nestscope query: info: {leftover_finding(ds.root, whole).message}"]
    assert "3 leftover file(s) of interrupted extracts" in err[0]


def test_whole_query_and_dataset_check_still_list_every_partition(ds, capsys):
    own = _leftover(ds.root, "intervals", *OWN)
    n = len(_fill_foreign(ds.root)) + 1
    _out, err = _run(["query", str(ds.root), "--format", "csv", "--by", "cec"], capsys)
    whole = Dataset(ds.root).leftovers()
    assert len(whole) == n and own in whole
    assert err == [f"nestscope query: info: {leftover_finding(ds.root, whole).message}"]
    main(["dataset", "check", str(ds.root)])
    got = capsys.readouterr()
    assert (got.out + got.err).count("orphan file") == n and own.name in got.out + got.err


def _compact_each(ds) -> None:
    """A compaction record in every partition of intervals (a rewrite keeping every row, as dedup's)."""
    for p in ds.parts("intervals"):
        assert compact.rewrite(ds, "intervals", p, lambda tbl: [True] * tbl.num_rows) is not None


def test_compaction_records_are_looked_up_in_the_query_partitions_only(ds, monkeypatch, capsys):
    before, _ = _run(["query", str(ds.root), "--format", "csv", "--by", "lpar", *NARROW], capsys)
    _compact_each(ds)
    fresh = Dataset(ds.root)
    asked = []
    real = type(fresh.index).part_rows

    def part_rows(self, table, cecs=None, months=None):
        asked.append((table, None if cecs is None else set(cecs), None if months is None else set(months)))
        return real(self, table, cecs, months)

    monkeypatch.setattr(type(fresh.index), "part_rows", part_rows)
    got = fresh.parts("intervals", cecs={OWN[0]}, months={OWN[1]})
    assert len(got) == 1 and "part-merged-" in got[0] and f"cec={OWN[0]}/month={OWN[1]}" in got[0]
    assert asked and all(c == {OWN[0]} and m == {OWN[1]} for _t, c, m in asked), asked
    monkeypatch.undo()
    after, err = _run(["query", str(ds.root), "--format", "csv", "--by", "lpar", *NARROW], capsys)
    assert after == before and err == []


def test_a_stale_record_elsewhere_is_for_dataset_check(ds, capsys):
    _compact_each(ds)
    (entry,) = [p for p in (ds.root / "manifest").glob("*.json") if "8561" in p.read_text()]
    entry.write_text("{damaged")          # Z15's entry: its compaction record (CEC 8561-45A12) goes stale
    _out, err = _run(["query", str(ds.root), "--format", "csv", "--by", "lpar", *NARROW], capsys)
    assert not any("compaction record stale" in ln for ln in err), err     # not the narrow query's partitions
    msgs = [f.message for f in compact.check(Dataset(ds.root))]
    assert any("compaction record stale" in m for m in msgs), msgs


_MONTHS = st.sets(st.builds(lambda y, m: f"{y}-{m:02d}", st.integers(2024, 2027), st.integers(1, 12)), max_size=20)
_WHEN = st.one_of(st.none(), st.datetimes(pd.Timestamp("2023-06-01").to_pydatetime(),
                                          pd.Timestamp("2028-06-01").to_pydatetime()))


@settings(max_examples=200, deadline=None)
@given(_MONTHS, _WHEN, _WHEN, st.one_of(st.none(), _MONTHS))
def test_scope_keeps_exactly_the_months_the_plan_reads(months, start, end, pin):
    """For any months present, window and ``month IN (..)`` pin, the month test of :func:`scope` keeps the
    months :func:`query_partitions` reads (the window's rule, then the pin): the leftovers looked at are those
    of the directories the query reads, no fewer, no more."""
    where = None if not pin else "month IN (" + ", ".join(f"'{m}'" for m in sorted(pin)) + ")"
    cecs, ok = scope(QuerySpec(by="lpar", start=start, end=end, where=where))
    assert cecs is None
    want = _months_between(start, end, months)
    if pin:
        want = (want if want is not None else set(months)) & pin
    if ok is None:
        assert want is None
    else:
        assert {m for m in months if ok(m)} == (want if want is not None else set(months))
