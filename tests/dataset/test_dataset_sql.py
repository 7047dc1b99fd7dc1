"""Formulas -> SQL with the engine's parser, and the --where validator."""

from __future__ import annotations

import duckdb
import numpy as np
import pytest

from app.dataset.query import QueryError, parse_days, parse_hours
from app.dataset.sql import DUCKDB, SPARK, WhereError, expr_sql, parse_where
from app.engine.expr import compile_expr


def _sql(text: str) -> str:
    return expr_sql(compile_expr(text).tree, lambda n: f'"{n}"')


def test_formula_sql_equals_engine_values():
    con = duckdb.connect()
    con.execute('CREATE TABLE t AS SELECT * FROM (VALUES (10.0, 4.0, 2.0), (3.0, 0.0, 1.0), (NULL, 1.0, 1.0)) '
                'AS v("B0", "B1", "B2")')
    for text in ("(B0 + B1) / B2 * 100", "B0 / B1", "-B0 + 2 * (B1 - B2) / 3", "B1 / (B2 - 1)"):
        got = np.array([r[0] if r[0] is not None else np.nan for r in con.execute(f"SELECT {_sql(text)} FROM t")
                        .fetchall()], dtype=float)
        env = {"B0": np.array([10.0, 3.0, np.nan]), "B1": np.array([4.0, 0.0, 1.0]), "B2": np.array([2.0, 1.0, 1.0])}
        want = compile_expr(text).evaluate(env)
        np.testing.assert_allclose(got, want, rtol=1e-12, equal_nan=True)
    # division by zero is NULL: 3/0 in row 2 of "B0 / B1"
    assert con.execute(f"SELECT {_sql('B0 / B1')} FROM t").fetchall()[1][0] is None


def test_formula_sql_rejects_what_the_parser_rejects():
    from app.engine.expr import ExprError

    with pytest.raises(ExprError):
        compile_expr("__import__('os').system('x')")
    assert "NULLIF" in _sql("B0 / B1") and "CAST(100.0 AS DOUBLE)" in _sql("B0 * 100")


def test_where_is_rewritten_from_its_parse_tree():
    assert parse_where("lpar IN ('ZOSA','ZOSB') AND class = 'GCP'", DUCKDB) == \
        "(\"lpar\" IN ('ZOSA', 'ZOSB') AND \"class\" = 'GCP')"
    assert parse_where("cpu >= 2 or not (os = 'z/VM')", SPARK) == "(`cpu` >= 2 OR (NOT (`os` = 'z/VM')))"
    assert parse_where("lpar NOT IN ('O''Brien')", DUCKDB) == "\"lpar\" NOT IN ('O''Brien')"


@pytest.mark.parametrize("bad, why", [
    ("lpar = 'x'; DROP TABLE iv", "not allowed"),
    ("lpar = 'x' -- comment", "not allowed"),
    ("password = 'x'", "unknown column"),
    ("lpar = upper('x')", "expected"),
    ("cpu = 'one'", "is a number"),
    ("lpar = 5", "holds text"),
    ("lpar IN ('a'", "ends too early"),
    ("(lpar = 'a'", "ends too early"),
    ("lpar = 'a' lpar", "unexpected"),
    ("", "empty"),
])
def test_where_rejects(bad, why):
    with pytest.raises(WhereError, match=why):
        parse_where(bad, DUCKDB)


def test_hours_and_days():
    assert parse_hours("8-17") == set(range(8, 17))        # 08:00 to 17:00
    assert parse_hours("0-6,22-24") == {0, 1, 2, 3, 4, 5, 22, 23}
    assert parse_days("mon-fri") == {0, 1, 2, 3, 4}
    assert parse_days("sat,sun") == {5, 6}
    assert parse_days("fri-mon") == {4, 5, 6, 0}
    for bad in ("25", "9-8", "x"):
        with pytest.raises(QueryError):
            parse_hours(bad)
    with pytest.raises(QueryError):
        parse_days("someday")
