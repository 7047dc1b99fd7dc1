"""NestScope engine: formula sets (data), deltas and resets, aggregation CEC -> LPAR -> class -> CPU,
time windows, metrics, workload hint.  No Qt, no byte layouts.

>>> from app.engine import Workspace, LEVELS, presentation_columns, metric_info, load_formula_sets
"""

from __future__ import annotations

from app.engine.aggregate import LEVELS, NodeKey
from app.engine.catalog import (METRIC_IDS, STATUSES, FormulaFileError, FormulaSet, MetricDef, load_formula_sets,
                                select_generation)
from app.engine.expr import Expr, ExprError, compile_expr, evaluate
from app.engine.hint import classify as classify_hint
from app.engine.layout import ColumnSpec, main_columns, metric_info, presentation_columns
from app.engine.smt import mt_utilization, productivity, thread_density
from app.engine.smt_report import CORE_COLUMNS as SMT_CORE_COLUMNS
from app.engine.smt_report import TYPE_COLUMNS as SMT_TYPE_COLUMNS
from app.engine.smt_report import smt_report
from app.engine.tree import TreeNode
from app.engine.workspace import Workspace

__all__ = [
    "Workspace", "LEVELS", "NodeKey", "TreeNode", "presentation_columns", "metric_info", "main_columns",
    "ColumnSpec", "load_formula_sets", "FormulaSet", "MetricDef", "FormulaFileError", "select_generation",
    "METRIC_IDS", "STATUSES", "Expr", "ExprError", "compile_expr", "evaluate", "classify_hint",
    "productivity", "mt_utilization", "thread_density", "smt_report", "SMT_TYPE_COLUMNS", "SMT_CORE_COLUMNS",
]
