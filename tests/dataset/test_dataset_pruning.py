"""Partition pruning of queries (issue 24, "Pruned and compact"): a query reads only the part files of the CECs and
months it can touch, and gives the same cells as the same query over every part file.

The sample set: three z16 LPARs on CEC 3931-123F5 (their intervals end in 2026-11) and three z15 LPARs on CEC
8561-45A12 (2026-10), so each (CEC, month) partition of the intervals table holds three parts, one per file."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from _fleet_helpers import SAMPLES, assert_same
from app.cli import main
from app.dataset import Dataset
from app.dataset import query as qmod
from app.dataset.query import QuerySpec, query_partitions, run_query
from app.engine.catalog import load_formula_sets
from app.engine.metrics import metric_ids

SMF = [s for s in SAMPLES if "smf113" in s.name]
Z16, Z15 = "3931-123F5", "8561-45A12"
M16, M15 = "2026-11", "2026-10"
IDS = metric_ids(load_formula_sets())

# --where texts: pinning one CEC, both, a month, nothing (a top-level OR), a CEC that does not exist
WHERES = [None, f"cec = '{Z16}'", f"cec = '{Z15}'", f"cec IN ('{Z16}', '{Z15}')", f"cec = '{Z15}' AND lpar <> 'ZOSB'",
          f"month = '{M16}'", f"month = '{M15}' AND cec IN ('{Z15}')", f"cec = '{Z16}' OR lpar = 'ZOSA'",
          "cec = 'NOPE'"]


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    root = tmp_path_factory.mktemp("pruning") / "ds"
    assert main(["extract", *map(str, SMF), "--to", str(root), "--quiet"]) == 0
    ends = sorted(set(run_query(Dataset(root), QuerySpec(by="cec"))["interval_end"]) |
                  set(run_query(Dataset(root), QuerySpec(by="interval"))["interval_end"]))
    return root, ends


def _opened(mp) -> list[list[str]]:
    """Record the part files every engine the query opens is given."""
    opened: list[list[str]] = []
    real = qmod.open_engine

    def open_engine(name, files, *window):
        opened.append(list(files))
        return real(name, files, *window)
    mp.setattr(qmod, "open_engine", open_engine)
    return opened


@settings(max_examples=14, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(by=st.sampled_from(["cec", "lpar", "class", "interval", "cpu"]), every=st.sampled_from([None, "day"]),
       where=st.sampled_from(WHERES), a=st.one_of(st.none(), st.integers(0, 10_000)),
       b=st.one_of(st.none(), st.integers(0, 10_000)))
def test_pruned_query_gives_the_cells_of_the_unpruned_one(fleet, by, every, where, a, b):
    """Any level, period, --where and window: the pruned query's rows are the rows of the same query reading
    every part file (the planner's list only drops parts no row of the answer comes from), and every part it
    opens lies in the CECs and months the condition pins."""
    root, ends = fleet
    if by == "interval":
        every = None
    start = ends[a % len(ends)] - (ends[1] - ends[0]) / 2 if a is not None else None   # between two ends
    end = ends[b % len(ends)] if b is not None else None
    spec = QuerySpec(by=by, every=every, where=where, start=start, end=end)
    with pytest.MonkeyPatch.context() as mp:
        opened = _opened(mp)
        pruned = run_query(Dataset(root), spec)
        mp.setattr(qmod, "query_partitions", lambda ds, spec, table="intervals": (None, None))
        whole = run_query(Dataset(root), spec)
    assert_same(pruned, whole, by, IDS)
    if every:
        assert pruned.sort_values(["interval_end"], kind="stable")["period"].tolist() == \
            whole.sort_values(["interval_end"], kind="stable")["period"].tolist()
    files, every_part = opened
    assert len(every_part) == 6 and len(files) <= 6
    cecs, months = query_partitions(Dataset(root), spec)
    if len(pruned):
        assert all(any(f"cec={c}/" in f for c in cecs or (Z16, Z15)) for f in files)
        assert all(any(f"month={m}/" in f for m in months or (M16, M15)) for f in files)


def test_where_cec_lists_only_that_cecs_parts(fleet):
    """The planner's file list for ``--where cec = X`` (and a window inside X's month) holds X's parts only: the
    three files of that CEC, one part each."""
    root, _ends = fleet
    ds = Dataset(root)
    for cec, month in ((Z16, M16), (Z15, M15)):
        spec = QuerySpec(by="lpar", where=f"cec = '{cec}'")
        cecs, months = query_partitions(ds, spec)
        assert cecs == {cec} and months is None
        files = ds.parts("intervals", cecs, months)
        assert len(files) == 3 and all(f"/cec={cec}/month={month}/" in f for f in files)
        # a window of the other CEC's month leaves no part to read
        other = M15 if month == M16 else M16
        spec = QuerySpec(by="lpar", where=f"cec = '{cec}'", start=f"{other}-02", end=f"{other}-20")
        assert ds.parts("intervals", *query_partitions(ds, spec)) == []


def test_query_opens_only_the_pinned_cecs_parts(fleet, monkeypatch):
    root, _ends = fleet
    opened = _opened(monkeypatch)
    got = run_query(Dataset(root), QuerySpec(by="cpu", where=f"cec = '{Z16}'"))
    (files,) = opened
    assert len(files) == 3 and all(f"cec={Z16}/" in f for f in files)
    assert set(got["cec"]) == {Z16} and len(got) > 0


@pytest.mark.parametrize("qbits, want", [([0, 0], (False, False)), ([0, 1], (False, True)), ([128, 0], (True, False)),
                                         ([129, 2], (True, True)), ([256 + 2], (False, False))])
def test_data_profile_finds_the_marks_the_rows_hold(qbits, want):
    """The one pass before the statement: generations and the marks whose per-row tests the sums need (bit 0 lost
    data, bit 7 implausible; 256 is the left-out mark the query itself adds, never stored)."""
    import duckdb

    from app.dataset.plan import data_profile
    from app.dataset.sql import DUCKDB

    class Eng:
        dialect = DUCKDB

        def __init__(self):
            self.con = duckdb.connect()

        def sql(self, text):
            return self.con.execute(text).df()
    eng = Eng()
    eng.con.execute("CREATE TABLE iv (machine_type VARCHAR, csvn INTEGER, generation VARCHAR, qbits BIGINT)")
    eng.con.executemany("INSERT INTO iv VALUES ('3931', 8, 'z16', ?)", [[q] for q in qbits])
    gmap, stored, marks = data_profile(eng, load_formula_sets())
    assert (marks["implausible"], marks["lost"]) == want
    assert stored == {"z16"} and [g for _mt, _cv, g, _v in gmap] == ["z16"]


@pytest.mark.parametrize("by, every", [("lpar", None), ("class", "day"), ("cpu", "day")])
def test_cpu_masks_count_what_a_distinct_count_does(fleet, monkeypatch, by, every):
    """DuckDB counts a row's CPUs as the bits set in a 256-bit string (CPU numbers 0-255): the same n_cpus as
    COUNT(DISTINCT cpu); a CPU number outside 0-255 (DuckDB refuses the bit string: OutOfRangeException) runs the
    statement again with the distinct count."""
    root, _ends = fleet
    spec = QuerySpec(by=by, every=every)
    masks = run_query(Dataset(root), spec)
    calls: list[bool] = []
    real = qmod.build_sql

    def plain(*a, cpu_bits=False, **k):
        calls.append(cpu_bits)
        return real(*a, cpu_bits=False, **k)
    monkeypatch.setattr(qmod, "build_sql", plain)
    counted = run_query(Dataset(root), spec)
    assert calls == [True]
    assert masks["n_cpus"].tolist() == counted["n_cpus"].tolist() and counted["n_cpus"].max() > 1 or by == "cpu"
    assert_same(masks, counted, by, IDS)
    # CPU numbers 300 and up (every row's number + 300): DuckDB refuses the bit string, and the distinct count
    # answers with the same cells (the same number of distinct CPUs per row)
    calls.clear()
    monkeypatch.setattr(qmod, "build_sql", lambda *a, **k: (calls.append(k.get("cpu_bits", False)), real(*a, **k))[1])
    ds = Dataset(root)
    eng = qmod.DuckDBEngine(ds.parts("intervals"))
    try:
        eng._define()                # the view iv over every part, defined
        eng.con.execute("CREATE TEMP TABLE t300 AS SELECT * REPLACE (CAST(cpu + 300 AS INTEGER) AS cpu) FROM iv")
        assert eng.con.execute("SELECT MIN(cpu) FROM t300").fetchone()[0] >= 300

        def view(name, files):      # the query's selection: the rows with the high CPU numbers
            eng._bodies[name] = ("SELECT * FROM t300", "SELECT * FROM t300")
        monkeypatch.setattr(eng, "view", view)
        again = run_query(ds, spec, eng=eng)
    finally:
        eng.close()
    assert calls == [True, False]
    if by == "cpu":                 # (the rows' own CPU numbers are the high ones)
        assert (again["cpu"] >= 300).all()
        again["cpu"] = again["cpu"] - 300
    assert_same(again, counted, by, IDS)
    assert again["n_cpus"].tolist() == counted["n_cpus"].tolist()


@pytest.mark.parametrize("by", ["cec", "lpar", "class"])
def test_bucket_bits_count_what_a_distinct_count_does(fleet, monkeypatch, by):
    """A narrow window's buckets are counted as the bits of a bit string of their numbers (DuckDB's
    bitstring_agg): the same rows as COUNT(DISTINCT) of the buckets gives (INTERVAL, hence LPARCPU, MIPS...,
    is the count times the bucket length, so a wrong count changes those metrics)."""
    root, ends = fleet
    cec = sorted(Dataset(root).cecs())[0]
    spec = QuerySpec(by=by, where=f"cec = '{cec}'", start=ends[1], end=ends[-2])
    sqls: list[str] = []
    real_run = qmod.DuckDBEngine.run

    def run(self, steps):
        sqls.append(" ".join(body for _name, body in steps))
        return real_run(self, steps)
    monkeypatch.setattr(qmod.DuckDBEngine, "run", run)
    bits = run_query(Dataset(root), spec)
    # bit strings: the buckets' (and at a level keyed by system, the CPUs'); a CEC's CPUs are counted distinct
    n_bits, n_distinct = sqls[-1].count("bitstring_agg"), sqls[-1].count("COUNT(DISTINCT")
    assert len(bits) and n_bits >= 1
    monkeypatch.setattr(qmod, "_BUCKET_BITS", 0)        # no bit string is narrow enough: the distinct count
    counted = run_query(Dataset(root), spec)
    assert sqls[-1].count("bitstring_agg") == n_bits - 1 and sqls[-1].count("COUNT(DISTINCT") == n_distinct + 1
    assert_same(bits, counted, by, IDS)
    assert bits["LPARCPU"].notna().any()


@pytest.mark.parametrize("by, every, where", [("cec", None, f"cec = '{Z16}'"), ("lpar", None, None),
                                              ("class", "day", f"cec = '{Z15}'"), ("interval", None, f"cec = '{Z16}'"),
                                              ("lpar", "month", None), ("cpu", "day", f"cec = '{Z16}'")])
def test_flat_statement_gives_the_cells_of_the_layered_one(fleet, monkeypatch, by, every, where):
    """DuckDB's one-SELECT statement (the per-row columns written into the aggregation; a constant generation and
    formula set when every row read is of one (machine type, CSVN) pair; CPSP, INTERVAL and the rows' order
    computed in Python, ``derived_columns``) gives the cells, in the same order, of the statement of views over
    views (``flat=False, typed=False``, CPSP and INTERVAL in SQL, ORDER BY): on one CEC (one pair: constants)
    and on both (two pairs, z16 and z15: the per-row CASE stays)."""
    root, ends = fleet
    spec = QuerySpec(by=by, every=every, where=where, start=ends[1], end=ends[-2])
    steps: list[list[str]] = []
    texts: list[str] = []
    real_run = qmod.DuckDBEngine.run

    def run(self, st):
        steps.append([name for name, _body in st])
        texts.append(" ".join(body for _name, body in st))
        return real_run(self, st)
    monkeypatch.setattr(qmod.DuckDBEngine, "run", run)
    flat = run_query(Dataset(root), spec)
    assert steps[-1] == [""] and " FROM r " not in texts[-1] and "ORDER BY" not in texts[-1]
    one_pair = where is not None and "cec =" in where
    assert ("machine_type" in texts[-1]) == (not one_pair)
    real = qmod.build_sql
    monkeypatch.setattr(qmod, "build_sql", lambda *a, **k: real(*a, **{**k, "flat": False, "typed": False}))
    layered = run_query(Dataset(root), spec)
    assert steps[-1] == ["base", "r", "agg", "a2", ""] and "machine_type" in texts[-1]
    assert len(flat) and flat["LPARCPU"].notna().any()
    assert_same(flat, layered, by, IDS)
    order = qmod.IDENT_OF[by] + (["period"] if every else []) + ["interval_end"]     # the rows in the same order
    assert flat[order].astype(str).to_numpy().tolist() == layered[order].astype(str).to_numpy().tolist()


def test_profile_says_whether_every_row_states_its_pair():
    """``typed`` (a constant generation may stand for the per-row look-up) only when no row lacks its machine
    type or CSVN."""
    from app.dataset.plan import profile_of

    sets = load_formula_sets()
    assert profile_of([("3931", 8, "z16", False, False)], sets)[2]["typed"]
    assert not profile_of([("3931", 8, "z16", False, False), (None, None, "z16", False, False)], sets)[2]["typed"]
    assert not profile_of([("3931", None, None, False, False)], sets)[2]["typed"]
