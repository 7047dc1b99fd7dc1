"""Pure helpers turning the engine's frames into what the views show.  No Qt widgets here."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import pandas as pd

from app.ui import messages as M
from app.ui.selection import BY_OF_LEVEL, Selection

SUMMARY_COL = "_summary"  # bool column added here: True on summary rows


@dataclass(frozen=True)
class ColDef:
    """One table column: an identification column (frozen) or a metric ColumnSpec."""

    id: str
    header: str
    decimals: int | None = None
    group: str = ""
    tooltip: str = ""
    frozen: bool = False
    numeric: bool = True


FROZEN = (
    ColDef("_system", M.COL_SYSTEM, frozen=True, numeric=False),
    ColDef("_node", M.COL_NODE, frozen=True, numeric=False),
    ColDef("_date", M.COL_DATE, frozen=True, numeric=False),
    ColDef("_end", M.COL_END, frozen=True, numeric=False),
)
N_FROZEN = len(FROZEN)


def wrap_header(text: str, max_line: int = 6) -> str:
    """Header text on up to two lines: long headers break at the space that balances the lines best.

    ``"Est Instr Cmplx CPI"`` -> ``"Est Instr\nCmplx CPI"``; short ones (``"CPI"``, ``"L1MP"``) stay as they are.
    """
    words = str(text).split()
    if len(text) <= max_line or len(words) < 2:
        return str(text)
    best = min(range(1, len(words)), key=lambda i: max(len(" ".join(words[:i])), len(" ".join(words[i:]))))
    return " ".join(words[:best]) + "\n" + " ".join(words[best:])


def metric_columns(ws: Any, generations: list[str]) -> list[ColDef]:
    """presentation_columns of every generation, in IBM order, union without duplicates.

    The workspace's own ``presentation_columns`` is preferred (it honours a formula override file).
    """
    if hasattr(ws, "presentation_columns"):
        columns = ws.presentation_columns
    else:
        from app.engine import presentation_columns as columns
    out: list[ColDef] = []
    seen: set[str] = set()
    for gen in generations or ["generic"]:
        try:
            specs = columns(gen)
        except Exception:  # an unknown generation: show identification columns only
            specs = []
        for spec in specs:
            if spec.id in seen:
                continue
            seen.add(spec.id)
            numeric = spec.id not in ("Workload_Hint", "quality")
            out.append(ColDef(spec.id, spec.header, spec.decimals, spec.group or "", spec.tooltip or spec.header,
                              numeric=numeric))
    if "quality" not in seen:
        out.append(ColDef("quality", M.COL_QUALITY, None, "Health", M.QUALITY_HEADER_TIP, numeric=False))
    return out


def interval_frame(ws: Any, sel: Selection, windowed: bool = True, summary: bool = True) -> pd.DataFrame:
    """Per-interval metric rows of the selected nodes (all LPARs when nothing is selected)."""
    start, end = (sel.start, sel.end) if windowed and sel.has_window else (None, None)
    parts: list[pd.DataFrame] = []
    if not sel.nodes:
        parts.append(_metrics(ws, "lpar_interval", None, start, end, summary))
    for level in sel.levels():
        nodes = [n for n in sel.nodes if n[0] == level]
        parts.append(_metrics(ws, BY_OF_LEVEL[level], nodes, start, end, summary))
    parts = [p for p in parts if p is not None and len(p)]
    if not parts:
        return pd.DataFrame()
    df = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0].reset_index(drop=True)
    return df


def _metrics(ws: Any, by: str, nodes: list | None, start: Any, end: Any, summary: bool) -> pd.DataFrame:
    df = ws.metrics(by=by, nodes=nodes, start=start, end=end, summary=summary)
    df = df.copy()
    df["_by"] = by
    df[SUMMARY_COL] = is_summary(df) if summary else False
    return df


def is_summary(df: pd.DataFrame) -> pd.Series:
    """Rows appended by ``summary=True`` (the engine marks them; see the adapters below)."""
    if "summary" in df.columns:
        return df["summary"].fillna(False).astype(bool)
    if "row_kind" in df.columns:
        return df["row_kind"].astype(str).eq("summary")
    return pd.Series(False, index=df.index)


def _col(df: pd.DataFrame, name: str) -> list[Any]:
    return df[name].tolist() if name in df.columns else [None] * len(df)


def node_texts(df: pd.DataFrame, qualify: bool = True) -> list[str]:
    """node_text of every row, column-wise (fast on large frames); qualified by CEC where names repeat."""
    cols = ("_by", "cec", "lpar", "class", "cpu", "core")
    texts = _per_distinct(node_text, cols, zip(*(_col(df, c) for c in cols), strict=True))
    return _qualified(df, texts) if qualify else texts


def _per_distinct(fn, cols: tuple[str, ...], rows) -> list[str]:
    """``fn`` of every row (a dict of ``cols``), computed once per distinct row (a selection's 2,880 rows are
    mostly one node)."""
    seen: dict[tuple, str] = {}
    out = []
    for vals in rows:
        try:
            text = seen.get(vals)
        except TypeError:       # an unhashable value: no memo
            text = None
        if text is None:
            text = fn(dict(zip(cols, vals, strict=True)))
            try:
                seen[vals] = text
            except TypeError:
                pass
        out.append(text)
    return out


def system_texts(df: pd.DataFrame, qualify: bool = True) -> list[str]:
    """system_text of every row; where one name belongs to two CECs (a z15 'before' and a z16 'after' ZOSA), the
    CEC (type-serial) and generation are added, so two rows never read the same."""
    cols = ("system", "lpar", "cec")
    texts = _per_distinct(system_text, cols, zip(*(_col(df, c) for c in cols), strict=True))
    return _qualified(df, texts) if qualify else texts


def _qualified(df: pd.DataFrame, names: list[str]) -> list[str]:
    if "cec" not in df.columns or not names:
        return names
    from app.engine.compare import qualify_names

    cecs = [str(c) for c in _col(df, "cec")]
    cec_of: dict[str, str] = {}
    if all(cec_of.setdefault(n, c) == c for n, c in set(zip(names, cecs))):
        return names          # no name on two CECs: qualify_names would return them as they are
    gens = [str(g) if _present(g) else "" for g in _col(df, "generation")]
    return qualify_names(names, cecs, gens)


def node_text(row: Any) -> str:
    """Short identification of the row's node: LPAR, class and CPU as they apply."""
    by = row.get("_by", "")
    parts: list[str] = []
    if by == "cec_interval":
        return str(row.get("cec", ""))
    if row.get("lpar") == "(pool)":                  # a CEC pool (engine.node_rows): "zIIP pool"
        return f"{row.get('class')} pool"
    for col in ("lpar", "class"):
        v = row.get(col)
        if _present(v):
            parts.append(str(v))
    cpu = row.get("cpu")
    if by == "cpu" and _present(cpu):
        parts.append(f"CPU {int(cpu)}")
    core = row.get("core")
    if by != "cpu" and _present(core):             # an SMT core row (the sum of its threads)
        parts.append(f"core {int(core)}")
    return " ".join(parts)


def system_text(row: Any) -> str:
    if row.get("system") == "(pool)":              # a CEC pool spans the CEC's systems: the CEC names it
        return str(row.get("cec", ""))
    for col in ("system", "lpar", "cec"):
        v = row.get(col)
        if _present(v):
            return str(v)
    return ""


def _present(v: Any) -> bool:
    if v is None:
        return False
    if isinstance(v, float) and math.isnan(v):
        return False
    return not (v is pd.NaT or (isinstance(v, str) and not v))


def fmt_number(value: Any, decimals: int | None) -> str:
    """Display text of a metric value: '' for NaN, ColumnSpec rounding otherwise (the engine's one formatter)."""
    global _format_value
    if _format_value is None:
        from app.engine.layout import format_value as _format_value
    return _format_value(value, decimals)


_format_value = None


def metric_decimals(metric_id: str) -> int | None:
    """The presentation rounding of a metric (the table's, the CLI's): the same for every generation."""
    from app.engine.layout import metric_decimals as decimals

    return decimals(metric_id)


def generations_of(df: pd.DataFrame) -> list[str]:
    if "generation" not in df.columns or df.empty:
        return []
    return [str(g) for g in pd.unique(df["generation"].dropna())]
