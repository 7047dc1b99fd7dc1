"""The SQL NestScope writes for DuckDB and Spark (dialects, literals, shift and local-time expressions), and the
one user-written SQL fragment (``--where``), validated.

Formulas are not written as SQL: a query sums the counters in SQL and the engine's own evaluator
(:mod:`app.engine.metrics`, as ``report``) applies the formulas to the few aggregated rows.

``--where`` is parsed by a small recursive-descent parser over a token list and written back as SQL from
the parse tree: only column names of the dataset, string and number literals, ``IN (...)``, ``NOT IN``,
``AND``/``OR``/``NOT``, comparisons and parentheses exist, so nothing the user types reaches SQL verbatim.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass


__all__ = ["Dialect", "DUCKDB", "SPARK", "WhereError", "parse_where",
           "WHERE_STRING_COLUMNS", "WHERE_NUMBER_COLUMNS", "where_partitions", "wall_sql",
           "local_offsets_sql", "local_shown_sql", "LOCAL_OFFSET"]


@dataclass(frozen=True)
class Dialect:
    """What differs between DuckDB and Spark SQL in the statements NestScope writes."""

    name: str
    quote_char: str
    idiv_fmt: str             # integer division of two BIGINT expressions
    ts_micros_fmt: str        # BIGINT microseconds since the epoch -> TIMESTAMP (UTC)
    median_fmt: str           # exact median (interpolated between the two middle values, as pandas)
    count_distinct_fmt: str = "COUNT(DISTINCT {a})"
    string_type: str = "STRING"

    def q(self, name: str) -> str:
        """A quoted identifier."""
        c = self.quote_char
        return c + name.replace(c, c + c) + c

    def idiv(self, a: str, b: str) -> str:
        return self.idiv_fmt.format(a=a, b=b)

    def ts_micros(self, a: str) -> str:
        return self.ts_micros_fmt.format(a=a)

    def median(self, a: str) -> str:
        return self.median_fmt.format(a=a)

    def count_distinct(self, a: str) -> str:
        return self.count_distinct_fmt.format(a=a)


DUCKDB = Dialect("duckdb", '"', "(({a}) // ({b}))", "make_timestamp({a})", "median({a})")
# Spark: size(collect_set()) instead of COUNT(DISTINCT): two distinct counts would make Spark expand every
# row once per distinct aggregate
SPARK = Dialect("spark", "`", "(({a}) div ({b}))", "timestamp_micros({a})", "percentile({a}, 0.5)",
                "size(collect_set({a}))")


def lit_str(s: str) -> str:
    """A SQL string literal (quotes doubled; the same in DuckDB and Spark with escapes off)."""
    return "'" + str(s).replace("\\", "\\\\").replace("'", "''") + "'"


# ----------------------------------------------------------------------------- --where
WHERE_STRING_COLUMNS = ("cec", "machine_type", "model", "lpar", "system", "os", "class", "generation",
                        "formula_set", "source", "sha256", "month")
WHERE_NUMBER_COLUMNS = ("cpu", "core", "cpu_speed", "cfvn", "csvn")
_TOKEN = re.compile(r"""\s*(?:
    (?P<str>'(?:[^']|'')*')
  | (?P<num>-?\d+(?:\.\d+)?)
  | (?P<op><=|>=|<>|!=|=|<|>)
  | (?P<punct>[(),])
  | (?P<word>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<bad>\S)
)""", re.VERBOSE)
_KEYWORDS = {"AND", "OR", "NOT", "IN"}


class WhereError(ValueError):
    """A ``--where`` text outside the allowed grammar (the message says what and where)."""


def _tokens(text: str) -> list[tuple[str, str, int]]:
    out = []
    pos = 0
    text = text.rstrip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            break
        kind = m.lastgroup
        val = m.group(kind)
        col = m.start(kind) + 1
        if kind == "bad":
            raise WhereError(f"character {val!r} at column {col} is not allowed (only column names, 'strings', "
                             "numbers, IN (...), AND, OR, NOT, comparisons and parentheses)")
        if kind == "word" and val.upper() in _KEYWORDS:
            kind, val = "kw", val.upper()
        out.append((kind, val, col))
        pos = m.end()
    return out


def parse_where(text: str, dialect: Dialect, columns: Mapping[str, str] | None = None) -> str:
    """Validate ``text`` and return it as SQL written from its parse tree.

    Grammar::

        expr  := term (OR term)*          term := factor (AND factor)*
        factor:= NOT factor | '(' expr ')' | pred
        pred  := column [NOT] IN '(' literal (',' literal)* ')' | column op literal
        op    := = | != | <> | < | <= | > | >=

    ``columns`` maps the allowed column names to 'string' or 'number' (default: the identity columns of the
    intervals table).  Strings compare with strings only, numbers with numbers only.
    """
    cols = dict(columns) if columns is not None else {**{c: "string" for c in WHERE_STRING_COLUMNS},
                                                      **{c: "number" for c in WHERE_NUMBER_COLUMNS}}
    if not text or not text.strip():
        raise WhereError("empty --where")
    toks = _tokens(text)
    pos = 0

    def peek() -> tuple[str, str, int] | None:
        return toks[pos] if pos < len(toks) else None

    def take(kind: str | None = None, val: str | None = None) -> tuple[str, str, int]:
        nonlocal pos
        t = peek()
        if t is None:
            raise WhereError("the condition ends too early" + (f" (expected {val or kind})" if (val or kind) else ""))
        if (kind and t[0] != kind) or (val and t[1] != val):
            raise WhereError(f"expected {val or kind} at column {t[2]}, found {t[1]!r}")
        pos += 1
        return t

    def literal(ctype: str, cname: str) -> str:
        t = take()
        if t[0] == "str":
            if ctype != "string":
                raise WhereError(f"column {cname} is a number; {t[1]} at column {t[2]} is a string")
            return lit_str(t[1][1:-1].replace("''", "'"))
        if t[0] == "num":
            if ctype != "number":
                raise WhereError(f"column {cname} holds text; write the value in quotes ('{t[1]}') at column {t[2]}")
            return repr(float(t[1])) if "." in t[1] else str(int(t[1]))
        raise WhereError(f"expected a 'string' or a number at column {t[2]}, found {t[1]!r}")

    def pred() -> str:
        t = take()
        if t[0] != "word":
            raise WhereError(f"expected a column name at column {t[2]}, found {t[1]!r}")
        name = t[1].lower()
        if name not in cols:
            raise WhereError(f"unknown column {t[1]!r} at column {t[2]}; allowed: {', '.join(sorted(cols))}")
        ctype = cols[name]
        nxt = peek()
        neg = False
        if nxt is not None and nxt[0] == "kw" and nxt[1] == "NOT":
            take()
            neg = True
            nxt = peek()
        if nxt is not None and nxt[0] == "kw" and nxt[1] == "IN":
            take()
            take("punct", "(")
            vals = [literal(ctype, name)]
            while peek() is not None and peek()[1] == ",":
                take()
                vals.append(literal(ctype, name))
            take("punct", ")")
            return f"{dialect.q(name)} {'NOT IN' if neg else 'IN'} ({', '.join(vals)})"
        if neg:
            raise WhereError("NOT after a column name must be followed by IN")
        op = take("op")[1]
        op = "<>" if op == "!=" else op
        return f"{dialect.q(name)} {op} {literal(ctype, name)}"

    def factor() -> str:
        t = peek()
        if t is not None and t[0] == "kw" and t[1] == "NOT":
            take()
            return f"(NOT {factor()})"
        if t is not None and t[1] == "(":
            take()
            inner = expr()
            take("punct", ")")
            return f"({inner})"
        return pred()

    def term() -> str:
        parts = [factor()]
        while peek() is not None and peek()[0] == "kw" and peek()[1] == "AND":
            take()
            parts.append(factor())
        return parts[0] if len(parts) == 1 else "(" + " AND ".join(parts) + ")"

    def expr() -> str:
        parts = [term()]
        while peek() is not None and peek()[0] == "kw" and peek()[1] == "OR":
            take()
            parts.append(term())
        return parts[0] if len(parts) == 1 else "(" + " OR ".join(parts) + ")"

    out = expr()
    if peek() is not None:
        t = peek()
        raise WhereError(f"unexpected {t[1]!r} at column {t[2]}")
    return out


def missing_counters(sets: Mapping, have: set[str]) -> list[tuple[str, str, list[str]]]:
    """(generation, metric, counters) for every formula of ``sets`` that reads counters the intervals table
    does not keep (``have``: its columns): SQL would give NULL silently where ``report`` has the values."""
    from app.engine.deltas import _counter_sort_key

    have = have if isinstance(have, (set, frozenset)) else set(have)
    out = []
    for g, fs in sets.items():
        for mid, m in fs.metrics.items():
            if m.compiled is None:
                continue
            used = _counters_of(m.compiled)
            if used <= have:
                continue
            out.append((g, mid, sorted((c for c in used if c not in have), key=_counter_sort_key)))
    return out


_USED: dict[int, tuple[object, frozenset[str]]] = {}     # id of a compiled formula -> (it, the counters it reads)


def _counters_of(expr) -> frozenset[str]:
    """``expr.counters``, worked out once per compiled formula (the catalog's sets share them between loads)."""
    hit = _USED.get(id(expr))
    if hit is not None and hit[0] is expr:
        return hit[1]
    if len(_USED) > 20_000:          # formula files loaded again and again: stay bounded
        _USED.clear()
    used = frozenset(expr.counters)
    _USED[id(expr)] = (expr, used)
    return used


def missing_counters_message(missing: list[tuple[str, str, list[str]]]) -> str:
    """The usage error for :func:`missing_counters`."""
    what = "; ".join(f"{mid} ({g}) needs {', '.join(cs)}" for g, mid, cs in missing[:6])
    more = f"; and {len(missing) - 6} more formula(s)" if len(missing) > 6 else ""
    return (f"formulas need counters the dataset does not keep: {what}{more}. A dataset's intervals keep the "
            "basic and problem-state counters and those the built-in formulas read; compute these with "
            "`nestscope report --formulas FILE` on the source files")


def where_partitions(text: str | None) -> dict[str, set[str]]:
    """The partition values (``cec``, ``month``) a ``--where`` text pins down: from its top-level ``AND`` terms
    of the form ``cec = 'X'`` or ``cec IN ('X', 'Y')`` (likewise ``month``).  Any top-level ``OR`` pins nothing
    (an empty dict: read every partition).  The text is validated by :func:`parse_where` first; these values only
    narrow the list of part files, the whole condition still runs in SQL."""
    if not text or not text.strip():
        return {}
    toks = _tokens(text)
    terms: list[list[tuple[str, str, int]]] = [[]]
    depth = 0
    for t in toks:
        if t[1] == "(":
            depth += 1
        elif t[1] == ")":
            depth -= 1
        if depth == 0 and t[0] == "kw" and t[1] == "OR":
            return {}
        if depth == 0 and t[0] == "kw" and t[1] == "AND":
            terms.append([])
        else:
            terms[-1].append(t)
    out: dict[str, set[str]] = {}
    for term in terms:
        if len(term) < 3 or term[0][0] != "word" or term[0][1].lower() not in ("cec", "month"):
            continue
        col = term[0][1].lower()
        if term[1] == ("op", "=", term[1][2]) and len(term) == 3 and term[2][0] == "str":
            vals = {term[2][1][1:-1].replace("''", "'")}
        elif term[1][:2] == ("kw", "IN") and term[2][1] == "(" and term[-1][1] == ")":
            inner = term[3:-1]
            if not inner or any(t[0] != "str" for t in inner[::2]) or any(t[1] != "," for t in inner[1::2]):
                continue
            vals = {t[1][1:-1].replace("''", "'") for t in inner[::2]}
        else:
            continue
        out[col] = out[col] & vals if col in out else vals
    return out


LOCAL_OFFSET = "_off_in"     # column of a query's rows: the offset in force during the interval (tz local)


def wall_sql(x: str, tz: str | None, d: Dialect) -> str:
    """The wall-clock time in the IANA zone ``tz`` of the UTC instant ``x`` (BIGINT nanoseconds), as BIGINT
    nanoseconds (microsecond precision, the dataset's): DuckDB's ``timezone()`` (ICU), Spark's
    ``from_utc_timestamp`` (its session zone is UTC).  ``x`` itself for ``utc``/None; for ``local`` the row's
    column :data:`LOCAL_OFFSET` (seconds east of UTC) is added."""
    if tz in (None, "utc"):
        return x
    if tz == "local":       # each row's own system's offset in force during the interval (app.dataset.query)
        return f"({x} + CAST({LOCAL_OFFSET} AS BIGINT) * 1000000000)"
    us = d.idiv(x, "1000")
    if d.name == "spark":
        return f"(unix_micros(from_utc_timestamp(timestamp_micros({us}), {lit_str(tz)})) * 1000)"
    return f"(epoch_us(timezone({lit_str(tz)}, make_timestamptz({us}))) * 1000)"


def local_offsets_sql(src: str, d: Dialect) -> str:
    """``--tz local``: base columns ``_off_in``, the offset in force during each interval (the offset stated at
    its start: the CPU's previous interval's ``utc_offset_s``, its own for a first one; the engine's rule, an
    offset holds from the record stating it on) and ``_off_end`` (stated at its end); NULL (unknown) is UTC."""
    part = ", ".join(f"{src}.{d.q(c)}" for c in ("cec", "lpar", "system", "class", "cpu"))
    return (f"COALESCE(LAG({src}.utc_offset_s) OVER (PARTITION BY {part} ORDER BY {src}.t_end), "
            f"{src}.utc_offset_s, 0) AS _off_in, COALESCE({src}.utc_offset_s, 0) AS _off_end, ")


def local_shown_sql(d: Dialect, per_row: bool, cec_level: bool) -> list[str]:
    """``--tz local``: each result row's offsets for its shown start and end (``_off_s``, ``_off_e``): those of
    its first interval's start and last interval's end; a CEC row of systems stating different offsets: UTC."""
    if per_row:
        return ["_off_in AS _off_s", "_off_end AS _off_e"]
    s, e = "min_by(_off_in, t_start)", "max_by(_off_end, t_end)"
    if cec_level:
        one = (f"({d.count_distinct(d.q('system'))} = 1 OR (MIN(_off_in) = MAX(_off_in) AND "
               "MIN(_off_end) = MAX(_off_end)))")
        s, e = f"CASE WHEN {one} THEN {s} ELSE 0 END", f"CASE WHEN {one} THEN {e} ELSE 0 END"
    return [f"{s} AS _off_s", f"{e} AS _off_e"]
