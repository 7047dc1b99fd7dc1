"""Formula sets as data: load, validate, override, select.

Every generation's formulas live in ``app/engine/formulas/<generation>.json``
(name, version, generation, machine_types, cfvn, csvn, workload_hint and
``metrics: {id: {expr, unit, decimals, status, group, header}}``).  A user
override file (``--formulas FILE``) is JSON of the form::

    {"z16": {"version": "z16 / site 2025-01",          (optional)
             "workload_hint": true,                      (optional)
             "metrics": {"RNI": {"expr": "2.0*(0.4*L3P+1.0*L4LP+2.0*L4RP+5.0*MEMP)/100",
                                 "status": "unconfirmed"}}}}

(``{"formula_sets": {...}}`` is accepted too).  Known generations are merged
metric by metric; an unknown key defines a new set (then ``machine_types``
and ``csvn`` select it).  Errors raise :class:`FormulaFileError` naming the
file and line.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


from app.engine.expr import Expr, ExprError, compile_expr

__all__ = ["MetricDef", "FormulaSet", "FormulaFileError", "load_formula_sets", "builtin_formula_sets",
           "select_generation", "STATUSES", "METRIC_IDS", "GENERIC",
           "GENERATION_ORDER"]

FORMULA_DIR = Path(__file__).with_name("formulas")
STATUSES = ("confirmed", "seed", "derived", "unconfirmed", "analyzer")
GENERIC = "generic"
GENERATION_ORDER = ("z10", "z196", "zEC12", "z13", "z14", "z15", "z16", "z17")
# Column order of the metrics frame (architecture.md).
METRIC_IDS = ("CPI", "PRBSTATE", "SUPSTATE", "L1MP", "L15P", "L2LP", "L2RP", "L2P", "L3P", "L4LP", "L4RP",
              "MEMP", "RNI", "Est_Instr_Cmplx_CPI", "Est_Finite_CPI", "Est_SCPL1M", "LPARCPU", "Eff_GHz",
              "MIPS_per_CPU", "TLB1_Miss_Pct_CPU", "TLB1_Cycles_per_Miss", "PTE_Pct_TLB1_Miss",
              "Raw_Penalty_CPI", "ST_IPC", "MT_IPC_per_thread", "MT_Throughput_Gain_est", "Thread_Density",
              "Core_Active_Pct")
_ID = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


class FormulaFileError(ValueError):
    """A formula file that cannot be used; ``line`` is 1-based when known."""

    def __init__(self, path: str, line: int | None, message: str):
        where = f"{path}: line {line}" if line else path
        super().__init__(f"{where}: {message}")
        self.path = path
        self.line = line
        self.detail = message


@dataclass
class MetricDef:
    """One metric of one formula set."""

    id: str
    expr: str | None
    unit: str = ""
    decimals: int = 2
    status: str = "unconfirmed"
    group: str = "Other"
    header: str = ""
    note: str = ""
    sources: list[str] = field(default_factory=list)
    compiled: Expr | None = field(default=None, repr=False)


@dataclass
class FormulaSet:
    """The formulas of one machine generation, with name and version."""

    name: str
    version: str
    generation: str
    machine_types: dict[str, str]
    cfvn: int | None
    csvn: int | None
    metrics: dict[str, MetricDef]
    workload_hint: bool = False
    source: str = ""
    order: list[str] = field(default_factory=list)   # evaluation order (dependencies first)

    def counters(self) -> set[str]:
        """Every counter token any metric of this set reads."""
        out: set[str] = set()
        for m in self.metrics.values():
            if m.compiled is not None:
                out |= m.compiled.counters
        return out

    def statuses(self) -> dict[str, str]:
        return {k: m.status for k, m in self.metrics.items()}


def _metric_from(mid: str, d: dict[str, Any], base: MetricDef | None) -> MetricDef:
    m = copy.copy(base) if base is not None else MetricDef(id=mid, expr=None, header=mid)
    if base is not None and "expr" in d and d["expr"] != base.expr and "status" not in d:
        m.status = "unconfirmed"          # a changed expression no longer carries the builtin status
    for key in ("expr", "unit", "decimals", "status", "group", "header", "note", "sources"):
        if key in d:
            setattr(m, key, d[key])
    m.compiled = None
    return m


def _line_of(text: str, *keys: str) -> int | None:
    """Line of the last of ``keys`` found in order (JSON object keys) in ``text``."""
    pos, found = 0, None
    for k in keys:
        mt = re.compile(r'"%s"\s*:' % re.escape(k)).search(text, pos)
        if not mt:
            break
        pos, found = mt.end(), mt.start()
    return None if found is None else text.count("\n", 0, found) + 1


def _validate(fs: FormulaSet, path: str, text: str | None) -> None:
    """Compile expressions, check types and dependency cycles; fill ``order``."""
    def fail(mid: str | None, msg: str, key: str | None = None) -> None:
        line = None
        if text is not None:
            keys = [fs.generation] + ([mid] if mid else []) + ([key] if key else [])
            line = _line_of(text, *keys)
        raise FormulaFileError(path, line, msg)

    ids = set(fs.metrics)
    for mid, m in fs.metrics.items():
        if not _ID.match(mid):
            fail(mid, f"metric id {mid!r} of {fs.generation} is not a valid identifier")
        if m.expr is not None and not isinstance(m.expr, str):
            fail(mid, f"metric {mid} of {fs.generation}: expr must be a string or null", "expr")
        if m.status not in STATUSES:
            fail(mid, f"metric {mid} of {fs.generation}: status {m.status!r} not one of {', '.join(STATUSES)}",
                 "status")
        if not isinstance(m.decimals, int) or isinstance(m.decimals, bool) or not 0 <= m.decimals <= 9:
            fail(mid, f"metric {mid} of {fs.generation}: decimals must be an integer 0..9", "decimals")
        m.header = m.header or mid
        if m.expr is not None:
            try:
                m.compiled = compile_expr(m.expr, allowed=ids)
            except ExprError as exc:
                fail(mid, f"metric {mid} of {fs.generation}: bad expression {m.expr!r}: {exc}", "expr")
    # topological order, cycle check
    order: list[str] = []
    state: dict[str, int] = {}

    def visit(mid: str, chain: list[str]) -> None:
        if state.get(mid) == 2:
            return
        if state.get(mid) == 1:
            fail(mid, f"metric {mid} of {fs.generation}: circular reference {' -> '.join(chain + [mid])}", "expr")
        state[mid] = 1
        c = fs.metrics[mid].compiled
        for dep in sorted(c.names & ids) if c is not None else ():
            visit(dep, chain + [mid])
        state[mid] = 2
        order.append(mid)

    for mid in fs.metrics:
        visit(mid, [])
    fs.order = order


def _set_from(d: dict[str, Any], path: str, text: str | None, base: FormulaSet | None,
              key: str) -> FormulaSet:
    if not isinstance(d, dict):
        raise FormulaFileError(path, _line_of(text or "", key), f"formula set {key!r} must be an object")
    mets = d.get("metrics", {})
    if not isinstance(mets, dict):
        raise FormulaFileError(path, _line_of(text or "", key, "metrics"),
                               f"formula set {key!r}: metrics must be an object")
    if base is None:
        gen = d.get("generation", key)
        fs = FormulaSet(name=d.get("name", gen), version=d.get("version", f"{gen} / user"), generation=gen,
                        machine_types=dict(d.get("machine_types") or {}), cfvn=d.get("cfvn"),
                        csvn=d.get("csvn"), metrics={}, workload_hint=bool(d.get("workload_hint", False)),
                        source=path)
    else:
        fs = copy.copy(base)
        fs.metrics = dict(base.metrics)
        fs.version = d.get("version", f"{base.version} + {Path(path).name}")
        fs.source = f"{base.source} + {path}"
        for k in ("name", "cfvn", "csvn", "workload_hint"):
            if k in d:
                setattr(fs, k, d[k])
        if "machine_types" in d:
            fs.machine_types = dict(d["machine_types"] or {})
    for mid, md in mets.items():
        if not isinstance(md, dict):
            raise FormulaFileError(path, _line_of(text or "", key, mid),
                                   f"metric {mid} of {key}: must be an object with at least 'expr'")
        fs.metrics[mid] = _metric_from(mid, md, fs.metrics.get(mid))
    _validate(fs, path, text)
    return fs


@functools.lru_cache(maxsize=1)
def _builtin() -> dict[str, FormulaSet]:
    out: dict[str, FormulaSet] = {}
    for p in sorted(FORMULA_DIR.glob("*.json")):
        text = p.read_text(encoding="utf-8")
        d = json.loads(text)
        fs = _set_from(d, str(p.name), text, None, d.get("generation", p.stem))
        out[fs.generation] = fs
    return out


def builtin_formula_sets() -> dict[str, FormulaSet]:
    """The packaged formula sets, generation -> FormulaSet (a fresh copy)."""
    return {k: copy.copy(v) for k, v in _builtin().items()}


def load_formula_sets(formula_file: str | Path | None = None) -> dict[str, FormulaSet]:
    """Packaged formula sets, optionally overridden by a user file.

    Parameters
    ----------
    formula_file : path, optional
        JSON override file (see module docstring).

    Returns
    -------
    dict
        generation -> :class:`FormulaSet`.

    Raises
    ------
    FormulaFileError
        When the file cannot be read, is not valid JSON (names the line), or
        defines a bad expression (names the metric and its line).
    """
    sets = builtin_formula_sets()
    if formula_file is None:
        return sets
    path = str(formula_file)
    try:
        text = Path(formula_file).read_text(encoding="utf-8")
    except OSError as exc:
        raise FormulaFileError(path, None, f"cannot be read ({exc.strerror or exc})") from None
    except UnicodeDecodeError as exc:
        raise FormulaFileError(path, None, f"is not UTF-8 text ({exc.reason})") from None
    try:
        d = json.loads(text)
    except json.JSONDecodeError as exc:
        raise FormulaFileError(path, exc.lineno, f"not valid JSON: {exc.msg} (column {exc.colno})") from None
    if isinstance(d, dict) and isinstance(d.get("formula_sets"), dict):
        d = d["formula_sets"]
    if not isinstance(d, dict):
        raise FormulaFileError(path, 1, "top level must be an object {generation: {metrics: {...}}}")
    for key, sd in d.items():
        if key.startswith("_") or key in ("schema", "comment"):
            continue
        gen = sd.get("generation", key) if isinstance(sd, dict) else key
        sets[gen] = _set_from(sd, path, text, sets.get(gen), key)
    return sets


def select_generation(sets: dict[str, FormulaSet], machine_type: str | None,
                      csvn: int | None) -> tuple[str, str]:
    """Choose the formula set for a machine type / CSVN pair.

    Returns
    -------
    (generation, how)
        ``how`` is ``'machine-type'`` (type known, CSVN agrees or unknown),
        ``'csvn-mismatch'`` (type known, CSVN differs: type wins),
        ``'by-csvn'`` (type unknown, generation from CSVN) or ``'generic'``
        (neither known: generation-independent metrics only).
    """
    mt = (machine_type or "").strip()
    for gen, fs in sets.items():
        if mt and mt in fs.machine_types:
            if csvn is not None and fs.csvn is not None and int(csvn) != int(fs.csvn):
                return gen, "csvn-mismatch"
            return gen, "machine-type"
    if csvn is not None:
        for gen, fs in sets.items():
            if fs.csvn is not None and int(fs.csvn) == int(csvn) and gen != GENERIC:
                return gen, "by-csvn"
    return GENERIC, "generic"


