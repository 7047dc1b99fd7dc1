"""Safe, vectorized evaluation of formula expressions.

An expression is parsed with :mod:`ast` and only a tiny grammar is accepted:
names, numeric literals, the binary operators ``+ - * /``, unary minus/plus
and parentheses.  Anything else (attribute access, calls, subscripts,
comparisons, ``**``, lambdas...) is rejected at parse time with
:class:`ExprError`.

Names are counter tokens (``B0``, ``P33``, ``K64``, ``E143``, ``M448``),
``CPSP`` (cycles per microsecond), ``INTERVAL`` (seconds) or ids of other
metrics of the same formula set.

Evaluation follows metrics.md: any division by zero and any missing (NaN)
operand yields NaN, never 0, and never a storm of numpy warnings.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

__all__ = ["ExprError", "Expr", "compile_expr", "evaluate", "COUNTER_TOKEN", "is_counter_token"]

COUNTER_TOKEN = re.compile(r"^[BPKEM]\d{1,3}$")
SPECIAL_NAMES = frozenset({"CPSP", "INTERVAL"})
_OPS: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: np.add, ast.Sub: np.subtract, ast.Mult: np.multiply,
}


class ExprError(ValueError):
    """An expression that is not allowed or cannot be parsed.

    ``col`` is the 1-based column inside the expression text when known.
    """

    def __init__(self, message: str, expr: str = "", col: int | None = None):
        super().__init__(message)
        self.expr = expr
        self.col = col


def is_counter_token(name: str) -> bool:
    """True for ``B0``, ``P33``, ``E143``... (set letter + counter number)."""
    return bool(COUNTER_TOKEN.match(name))


@dataclass(frozen=True)
class Expr:
    """A parsed, validated expression.

    Attributes
    ----------
    text : str
        The expression as written.
    names : frozenset of str
        Every name the expression uses.
    """

    text: str
    names: frozenset[str]
    tree: ast.Expression = field(repr=False, compare=False)

    @property
    def counters(self) -> frozenset[str]:
        """Counter tokens used (``B0``, ``E143``...)."""
        return frozenset(n for n in self.names if is_counter_token(n))

    def evaluate(self, env: Mapping[str, Any], n: int | None = None) -> np.ndarray:
        """Evaluate on ``env``; see :func:`evaluate`."""
        return evaluate(self, env, n)


def _check(node: ast.AST, text: str, names: set[str]) -> None:
    if isinstance(node, ast.Expression):
        _check(node.body, text, names)
    elif isinstance(node, ast.BinOp):
        if not isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
            raise ExprError(f"operator {type(node.op).__name__} is not allowed (only + - * /)",
                            text, getattr(node, "col_offset", 0) + 1)
        _check(node.left, text, names)
        _check(node.right, text, names)
    elif isinstance(node, ast.UnaryOp):
        if not isinstance(node.op, (ast.USub, ast.UAdd)):
            raise ExprError(f"unary operator {type(node.op).__name__} is not allowed",
                            text, node.col_offset + 1)
        _check(node.operand, text, names)
    elif isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, (int, float)):
            raise ExprError(f"literal {node.value!r} is not a number", text, node.col_offset + 1)
    elif isinstance(node, ast.Name):
        names.add(node.id)
    else:
        what = {ast.Attribute: "attribute access", ast.Call: "function calls",
                ast.Subscript: "subscripts", ast.Compare: "comparisons",
                ast.BoolOp: "boolean operators", ast.Lambda: "lambdas",
                ast.IfExp: "conditional expressions"}.get(type(node), type(node).__name__)
        raise ExprError(f"{what} not allowed (only names, numbers, + - * / and parentheses)",
                        text, getattr(node, "col_offset", 0) + 1)


def compile_expr(text: str, allowed: Iterable[str] | Callable[[str], bool] | None = None) -> Expr:
    """Parse and validate an expression.

    Parameters
    ----------
    text : str
        The expression, e.g. ``"(B2+B4)/B1*100"``.
    allowed : iterable of str or callable, optional
        Extra names (metric ids) allowed besides counter tokens, ``CPSP`` and
        ``INTERVAL``; or a predicate.  ``None`` allows any identifier.

    Returns
    -------
    Expr

    Raises
    ------
    ExprError
        On a syntax error, a construct outside the grammar or a name not allowed.
    """
    if not isinstance(text, str) or not text.strip():
        raise ExprError("empty expression", str(text))
    tree, names = _parsed(text)
    if allowed is not None:
        ok = allowed if callable(allowed) else (lambda s, _a=frozenset(allowed): s in _a)
        for name in sorted(names):
            if not (is_counter_token(name) or name in SPECIAL_NAMES or ok(name)):
                raise ExprError(f"name {name!r} is not a counter token, CPSP, INTERVAL or a metric "
                                "of this formula set", text)
    return Expr(text=text.strip(), names=names, tree=tree)


@functools.lru_cache(maxsize=1024)
def _parsed(text: str) -> tuple[ast.Expression, frozenset[str]]:
    """The checked tree of ``text`` and its names, once per text (the packaged sets repeat each expression in
    several generations: 167 compiles of 66 texts at every start).  The tree is only read, never changed; an
    error is raised again at every call (lru_cache keeps no exception)."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise ExprError(f"syntax error: {exc.msg}", text, exc.offset) from None
    names: set[str] = set()
    _check(tree, text, names)
    return tree, frozenset(names)


def _eval(node: ast.AST, env: Mapping[str, Any], n: int | None) -> Any:
    if isinstance(node, ast.BinOp):
        a = _eval(node.left, env, n)
        b = _eval(node.right, env, n)
        if isinstance(node.op, ast.Div):
            b = np.asarray(b, dtype=np.float64)
            out = np.divide(a, b)
            return np.where(b == 0, np.nan, out)
        return _OPS[type(node.op)](a, b)
    if isinstance(node, ast.UnaryOp):
        v = _eval(node.operand, env, n)
        return np.negative(v) if isinstance(node.op, ast.USub) else v
    if isinstance(node, ast.Constant):
        return float(node.value)
    if isinstance(node, ast.Name):
        v = env.get(node.id)
        if v is None:
            return np.nan
        return np.asarray(v, dtype=np.float64)
    raise ExprError(f"unexpected node {type(node).__name__}")  # pragma: no cover (checked at compile)


def evaluate(expr: Expr, env: Mapping[str, Any], n: int | None = None) -> np.ndarray:
    """Evaluate a compiled expression over arrays.

    Parameters
    ----------
    expr : Expr
        From :func:`compile_expr`.
    env : mapping
        Name -> scalar or 1-d array (all arrays of one length).  A name missing
        from ``env`` (or ``None``) is NaN.
    n : int, optional
        Length of the result when every operand is a scalar.

    Returns
    -------
    numpy.ndarray
        float64; NaN wherever an operand is NaN or a divisor is 0; never inf.
    """
    with np.errstate(all="ignore"):
        out = np.asarray(_eval(expr.tree.body, env, n), dtype=np.float64)
        if n is not None and out.ndim == 0:
            out = np.full(n, float(out))
        if out.ndim:
            out = np.where(np.isfinite(out), out, np.nan)
        elif not np.isfinite(out):
            out = np.asarray(np.nan)
    return out
