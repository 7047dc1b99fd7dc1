"""Pruned and compact (issue 24): the manifest index, partition pruning of narrow queries, compaction, check and
vacuum.  The sample set: three z16 LPARs on CEC 3931-123F5 and three z15 LPARs on CEC 8561-45A12, each CEC's
files in one month (z16: 2026-11, z15: 2026-10), so each (table, CEC, month) partition holds three parts, one per file."""

from __future__ import annotations

import json
import os
import shutil

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _fleet_helpers import SAMPLES, SMF, assert_same, extracted_smf, fresh_copy
from app.cli import main
from app.dataset import Dataset
from app.dataset import compact as comp
from app.dataset import query as qmod
from app.dataset.index import INDEX_NAME
from app.dataset.query import QuerySpec, run_query
from app.dataset.sql import DUCKDB, parse_where, where_partitions
from app.engine.catalog import load_formula_sets
from app.engine.metrics import metric_ids

Z16, Z15 = "3931-123F5", "8561-45A12"
M16, M15 = "2026-11", "2026-10"


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    return extracted_smf(tmp_path_factory, "upkeep")


@pytest.fixture
def ds(pristine, tmp_path):
    return fresh_copy(pristine, tmp_path)


def _ids():
    return metric_ids(load_formula_sets())


def test_extract_writes_the_index_and_it_lists_what_the_entries_list(ds):
    assert (ds.root / "manifest" / INDEX_NAME).is_file()
    idx = ds.index
    assert len(idx.sound()) == 6 and not idx.dirty            # loaded from the index: nothing re-read
    by_entries = sorted(str(ds.root / p) for e in ds.entries() for p in e["parts"]["intervals"])
    assert sorted(ds.parts("intervals")) == by_entries and len(by_entries) == 6
    assert ds.cecs() == [Z16, Z15]
    assert ds.months() == [M15, M16] and ds.months([Z16]) == [M16]
    assert len(ds.parts("intervals", cecs=[Z15])) == 3 and ds.parts("intervals", months=["2026-09"]) == []
    assert len(ds.parts("intervals", months=["2026-10"])) == 3


def test_old_dataset_without_index_reads_the_same_and_migrates_on_first_write(ds):
    before = run_query(ds, QuerySpec(by="lpar"))
    (ds.root / "manifest" / INDEX_NAME).unlink()
    old = Dataset(ds.root)
    assert old.index.dirty and len(old.index.sound()) == 6        # read entry by entry
    assert run_query(old, QuerySpec(by="lpar")).equals(before)
    assert old.save_index() and (ds.root / "manifest" / INDEX_NAME).is_file()
    assert not Dataset(ds.root).index.dirty


def test_damaged_index_is_rebuilt_from_the_entries(ds):
    before = run_query(ds, QuerySpec(by="lpar"))
    (ds.root / "manifest" / INDEX_NAME).write_bytes(b"PAR1 not an index")
    again = Dataset(ds.root)
    assert run_query(again, QuerySpec(by="lpar")).equals(before) and again.findings == []


def test_entry_committed_by_another_process_is_seen(ds, tmp_path):
    first = Dataset(ds.root)
    n = len(first.parts("intervals"))
    other = tmp_path / "one"
    shutil.copytree(ds.root, other)
    (e,) = [e for e in Dataset(other).entries() if e["name"] == SMF[0].name]
    os.remove(ds.root / "manifest" / f"{e['sha256']}.json")     # as if that file was not extracted yet
    late = Dataset(ds.root)
    assert len(late.parts("intervals")) == n - 1
    shutil.copy(other / "manifest" / f"{e['sha256']}.json", ds.root / "manifest")   # committed meanwhile
    late._index_seen -= 2.0                                      # a second later
    assert len(late.parts("intervals")) == n


def _record_engines(monkeypatch):
    opened, views = [], []
    real_open, real_view = qmod.open_engine, qmod.DuckDBEngine.view

    def open_engine(name, files, *window):
        opened.append(list(files))
        return real_open(name, files, *window)

    def view(self, name, files):
        views.append((name, list(files)))
        return real_view(self, name, files)
    monkeypatch.setattr(qmod, "open_engine", open_engine)
    monkeypatch.setattr(qmod.DuckDBEngine, "view", view)
    return opened, views


def test_narrow_query_reads_only_its_parts_and_gives_the_same_rows(ds, monkeypatch):
    full = run_query(ds, QuerySpec(by="lpar"))
    opened, views = _record_engines(monkeypatch)
    narrow = run_query(ds, QuerySpec(by="lpar", where=f"cec = '{Z15}' AND lpar <> 'NONE'"))
    # the statement reads the three z15 parts only, and the time buckets come from the cache extract left
    (files,) = opened
    assert len(files) == 3 and all(f"cec={Z15}" in f for f in files)
    assert [v for v, _f in views if v != "iv"] == []
    want = full[(full["cec"] == Z15)].reset_index(drop=True)
    assert_same(narrow, want, "lpar", _ids())
    # a window outside the data's month reads no part of it (one part keeps the statement valid, no row)
    opened.clear()
    none = run_query(ds, QuerySpec(by="lpar", start="2025-01-01", end="2025-02-01"))
    assert len(none) == 0 and len(opened[0]) == 1


def test_without_the_bucket_cache_a_narrow_query_reads_its_cec_only(ds, monkeypatch):
    full = run_query(ds, QuerySpec(by="interval"))
    (ds.root / "stats.json").unlink()
    fresh = Dataset(ds.root)
    opened, views = _record_engines(monkeypatch)
    narrow = run_query(fresh, QuerySpec(by="interval", where=f"cec IN ('{Z16}')"))
    ((name, files),) = [v for v in views if v[0] != "iv"]
    assert name == "iv_cec" and len(files) == 3 and all(f"cec={Z16}" in f for f in files)
    assert_same(narrow, full[full["cec"] == Z16].reset_index(drop=True), "interval", _ids())
    assert not (ds.root / "stats.json").exists()          # a query writes nothing into the dataset


def test_the_data_profile_comes_from_the_cache_extract_left(ds, monkeypatch):
    """extract keeps each CEC's profile per month in stats.json: a query reads it instead of scanning its parts
    (no data_profile pass) and gives the rows of the scan; a cache without profiles (an older NestScope's) makes
    the query scan, with the same rows."""
    from app.dataset import stats

    doc = json.loads((ds.root / "stats.json").read_text())
    z16 = doc["cecs"][Z16]["profile"]
    assert z16 and all(r[1:4] == ["3931", z16[0][2], "z16"] for r in z16)         # machine type, CSVN, generation
    counted = doc["cecs"][Z16]["counted"]
    assert stats.cached_profile(Dataset(ds.root), [Z16], None) == [(*r[1:], k) for r, k in zip(z16, counted)]
    assert stats.cached_profile(Dataset(ds.root), [Z16], ["1999-01"]) == []
    scans = []
    real = qmod.data_profile
    monkeypatch.setattr(qmod, "data_profile", lambda *a, **k: (scans.append(1), real(*a, **k))[1])
    cached = run_query(Dataset(ds.root), QuerySpec(by="class"))
    assert scans == []
    for e in doc["cecs"].values():          # as an older NestScope wrote it
        e.pop("profile")
    (ds.root / "stats.json").write_text(json.dumps(doc))
    assert stats.cached_profile(Dataset(ds.root), [Z16], None) is None
    scanned = run_query(Dataset(ds.root), QuerySpec(by="class"))
    assert scans == [1]
    assert_same(cached, scanned, "class", _ids())


def test_the_cache_counts_the_quality_counters_and_a_whole_one_is_not_counted_again(ds, monkeypatch):
    """extract keeps, beside each profile row, its rows and how many hold the first problem-state and extended
    counter (the counts a query makes for its quality mark 64, "a counter set missing on some intervals"): equal
    to DuckDB's own count over the CEC's parts; a counter every row read holds (or none does) is not counted by
    the query's statement (0: the mark cannot apply), with the same rows as the statement that counts it; a cache
    saying some rows lack it, or rows of one month hold it and of another do not, keeps the count."""
    import duckdb

    from app.dataset import stats

    doc = json.loads((ds.root / "stats.json").read_text())
    ds_ = Dataset(ds.root)
    first = {x: next(c for c in ds_.counters() if c[0] == x) for x in "PE"}
    files = ds_.parts("intervals", cecs=[Z16])
    lst = "[" + ", ".join(f"'{f}'" for f in files) + "]"
    want = duckdb.connect().execute(f"SELECT COUNT(*), COUNT({first['P']}), COUNT({first['E']}) FROM "
                                    f"read_parquet({lst}, union_by_name=true)").fetchone()
    counted = doc["cecs"][Z16]["counted"]
    got = [sum(k[c] for k in counted) for c in ("rows", first["P"], first["E"])]
    assert got == list(want) and want[0] > 0
    assert want[1] == want[0]           # (every z16 sample interval holds its problem-state counters)
    sqls: list[str] = []
    real = qmod.DuckDBEngine.run
    monkeypatch.setattr(qmod.DuckDBEngine, "run", lambda self, steps: (sqls.append(steps[-1][1]), real(self, steps))[1])
    spec = QuerySpec(by="class", where=f"cec = '{Z16}'")

    def counts(c: str) -> bool:
        return f'COUNT("{c}")' in sqls[-1]
    whole = run_query(Dataset(ds.root), spec)
    assert counts(first["P"]) == (0 < want[1] < want[0]) and counts(first["E"]) == (0 < want[2] < want[0])
    for variant in ("gone", "some", "mixed"):
        d2 = json.loads(json.dumps(doc))
        rows = d2["cecs"][Z16]["counted"]
        if variant == "gone":           # as a NestScope before the counts wrote it: counted by the statement
            for e in d2["cecs"].values():
                e.pop("counted")
        elif variant == "some":         # one row without the counter: the count is kept
            rows[0][first["P"]] = rows[0]["rows"] - 1
        else:                           # every row of one profile row holds it, none of another
            rows.append({**rows[0], first["P"]: 0})
            d2["cecs"][Z16]["profile"].append(d2["cecs"][Z16]["profile"][0])
        (ds.root / "stats.json").write_text(json.dumps(d2))
        again = run_query(Dataset(ds.root), spec)
        assert counts(first["P"]), variant
        assert_same(whole, again, "class", _ids())


@pytest.mark.parametrize("text, want", [
    ("cec = 'A'", {"cec": {"A"}}),
    ("cec IN ('A', 'B') AND lpar = 'X'", {"cec": {"A", "B"}}),
    ("lpar = 'X' AND cec IN ('A', 'B') AND cec = 'B'", {"cec": {"B"}}),
    ("cec = 'A' OR cec = 'B'", {}),              # a top-level OR pins nothing
    ("NOT cec = 'A'", {}),
    ("cec NOT IN ('A')", {}),
    ("cec <> 'A'", {}),
    ("(cec = 'A' OR lpar = 'X') AND month = '2025-01'", {"month": {"2025-01"}}),
])
def test_where_partitions(text, want):
    parse_where(text, DUCKDB)
    assert where_partitions(text) == want


_ROWS = [(c, m, lp) for c in ("A", "B", "C") for m in ("2025-01", "2025-02") for lp in ("X", "Y")]


def _cond():
    leaf = st.one_of(
        st.builds(lambda col, v: f"{col} = '{v}'", st.sampled_from(["cec", "month", "lpar"]),
                  st.sampled_from(["A", "B", "C", "X", "Y", "2025-01", "2025-02"])),
        st.builds(lambda col, vs: f"{col} IN ({', '.join(repr(v) for v in vs)})", st.sampled_from(["cec", "month"]),
                  st.lists(st.sampled_from(["A", "B", "2025-02"]), min_size=1, max_size=3)),
        st.builds(lambda v: f"cec NOT IN ('{v}')", st.sampled_from(["A", "B"])))
    return st.recursive(leaf, lambda inner: st.one_of(
        st.builds(lambda a, b: f"{a} AND {b}", inner, inner),
        st.builds(lambda a, b: f"{a} OR {b}", inner, inner),
        st.builds(lambda a: f"NOT ({a})", inner),
        st.builds(lambda a: f"({a})", inner)), max_leaves=6)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_cond())
def test_pruning_never_drops_a_row_the_condition_keeps(text):
    """Any --where: every row the condition keeps lies in the partitions where_partitions leaves to read."""
    import duckdb

    con = duckdb.connect()
    con.execute("CREATE TABLE t (cec VARCHAR, month VARCHAR, lpar VARCHAR)")
    con.executemany("INSERT INTO t VALUES (?, ?, ?)", _ROWS)
    kept = con.execute(f"SELECT cec, month FROM t WHERE {parse_where(text, DUCKDB)}").fetchall()
    con.close()
    pinned = where_partitions(text)
    for cec, month in kept:
        assert cec in pinned.get("cec", {cec}) and month in pinned.get("month", {month}), (text, pinned)


def test_compact_merges_parts_and_queries_are_the_same(ds, capsys):
    ids = _ids()
    before = {by: run_query(ds, QuerySpec(by=by)) for by in ("cec", "lpar", "interval", "cpu")}
    n_before = len(ds.parts("intervals")) + len(ds.parts("samples"))
    assert main(["dataset", "compact", str(ds.root)]) == 0
    out = capsys.readouterr().out
    assert "4 merged part(s) written; part files 12 -> 4" in out
    after = Dataset(ds.root)
    parts = after.parts("intervals")
    assert n_before == 12 and len(parts) == 2 and all("part-merged-" in p for p in parts)
    for by, want in before.items():
        assert_same(run_query(after, QuerySpec(by=by)), want, by, ids)
    # the replaced parts are gone, nothing is an orphan, nothing is wrong
    assert after.orphans() == [] and comp.check(after) == []
    assert sum(1 for _ in (ds.root / "intervals").rglob("*.parquet")) == 2
    # a file extracted after the compaction adds a part beside the merged one; compacting again merges all
    vm = [s for s in SAMPLES if "monwrite" in s.name]
    assert after.extract(vm[0]).status == "added"       # z/VM on the z16 CEC, in its month
    mid = run_query(after, QuerySpec(by="lpar"))
    again = comp.compact(after)
    assert sorted((r["table"], r["cec"], len(r["replaces"])) for r in again) == [("intervals", Z16, 4),
                                                                                ("samples", Z16, 4)]
    last = Dataset(ds.root)
    assert_same(run_query(last, QuerySpec(by="lpar")), mid, "lpar", ids)
    assert last.orphans() == [] and len(list((ds.root / "compact").glob("*.json"))) == 4


def test_compacting_merged_parts_again_supersedes_the_record(ds):
    before = run_query(ds, QuerySpec(by="lpar"))
    assert comp.compact(ds, [("intervals", Z16, M16)], target_bytes=1) == []   # groups of one: nothing
    units = comp._units(ds, "intervals", Z16, M16)
    assert len(units) == 3
    first = comp._merge(ds, "intervals", Z16, M16, units[:2])       # an earlier compaction of two parts
    assert len(first["replaces"]) == 2
    assert_same(run_query(Dataset(ds.root), QuerySpec(by="lpar")), before, "lpar", _ids())
    (rec,) = comp.compact(ds, [("intervals", Z16, M16)])            # the merged part and the third one
    assert len(rec["replaces"]) == 3 and first["part"] not in rec["replaces"]
    assert not (ds.root / first["part"]).exists() and len(list((ds.root / "compact").glob("*.json"))) == 1
    again = Dataset(ds.root)
    assert_same(run_query(again, QuerySpec(by="lpar")), before, "lpar", _ids())
    assert again.orphans() == [] and comp.check(again) == []


def test_check_lists_orphans_and_vacuum_removes_them(ds, monkeypatch, capsys):
    def die(self, sha, entry):                       # killed before its commit
        raise KeyboardInterrupt

    extra = ds.root.parent / "other.gz"
    extra.write_bytes(SAMPLES[0].read_bytes())       # the VM file (samples, intervals, partitions): not added yet
    with monkeypatch.context() as mp:
        mp.setattr(Dataset, "_commit", die)
        mp.setattr(Dataset, "_remove", lambda self, rels: None)
        with pytest.raises(KeyboardInterrupt):
            ds.extract(extra)
    assert main(["dataset", "check", str(ds.root)]) == 1
    out = capsys.readouterr().out
    assert out.count("orphan file") == 3 and "3 problem(s)" in out
    assert main(["dataset", "check", str(ds.root), "--min-age", "3600"]) == 0    # young: maybe a running extract
    capsys.readouterr()
    assert main(["dataset", "vacuum", str(ds.root)]) == 0
    assert "removed 3 orphan file(s)" in capsys.readouterr().out
    assert main(["dataset", "check", str(ds.root)]) == 0
    assert "0 problem(s)" in capsys.readouterr().out


def test_check_names_a_damaged_part_and_a_stale_compaction(ds, capsys):
    (rec,) = comp.compact(ds, [("intervals", Z15, M15)])
    path = ds.root / rec["part"]
    b = bytearray(path.read_bytes())
    b[len(b) // 2] ^= 0x10
    path.write_bytes(bytes(b))
    assert main(["dataset", "check", str(ds.root)]) == 1
    out = capsys.readouterr().out
    assert f"{path}: whole file: part file damaged" in out and "merged from 3 part(s)" in out
    # the entry of one replaced part removed: the record no longer stands for sound entries and is left out
    (e,) = [e for e in Dataset(ds.root).entries() if e["parts"]["intervals"] and e["parts"]["intervals"][0]
            in rec["replaces"]][:1]
    os.remove(ds.root / "manifest" / f"{e['sha256']}.json")
    fresh = Dataset(ds.root)
    assert all(f"cec={Z15}" not in p for p in fresh.parts("intervals"))
    assert any(f.code == "dataset-compact-stale" for f in fresh.findings)


def test_dataset_command_on_a_directory_that_is_not_a_dataset(tmp_path, capsys):
    assert main(["dataset", "check", str(tmp_path / "nope")]) == 2
    assert "does not exist" in capsys.readouterr().err


def test_compaction_record_damage_is_named(ds):
    (rec,) = comp.compact(ds, [("intervals", Z15, M15)])
    (p,) = (ds.root / "compact").glob("*.json")
    doc = json.loads(p.read_text())
    doc["rows"] += 1
    p.write_text(json.dumps(doc))
    fresh = Dataset(ds.root)
    fresh.parts("intervals")
    assert any(f.code == "dataset-compact-damaged" for f in fresh.findings)
    # its merged part holds the only copy of those rows: never an orphan that vacuum would remove
    assert ds.root / rec["part"] not in fresh.orphans()


def test_samples_keep_only_what_intervals_need_unless_asked(tmp_path):
    import pyarrow.parquet as pq

    from app.dataset.store import interval_counters

    need = interval_counters(load_formula_sets())
    slim, full = tmp_path / "slim", tmp_path / "full"
    assert main(["extract", str(SMF[0]), "--to", str(slim), "--quiet"]) == 0
    assert main(["extract", str(SMF[0]), "--to", str(full), "--quiet", "--keep-samples"]) == 0

    def present(root):
        (p,) = (root / "samples").rglob("*.parquet")
        t = pq.read_table(p, partitioning=None)
        return {c for c in t.column_names if c[0] in "BPKEM" and c[1:].isdigit() and t.column(c).null_count < len(t)}
    kept, raw = present(slim), present(full)
    assert kept <= need and raw - kept and kept < raw           # the z16 sample has counters no formula reads
    assert Dataset(slim).entries()[0]["samples_counters"] == "intervals"
    assert Dataset(full).entries()[0]["samples_counters"] == "all"
    a, b = run_query(Dataset(slim), QuerySpec(by="cpu")), run_query(Dataset(full), QuerySpec(by="cpu"))
    assert_same(a, b, "cpu", _ids())
