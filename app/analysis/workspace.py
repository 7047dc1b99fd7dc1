"""Workspaces over read results: the one place a front end makes an :class:`app.engine.Workspace`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.analysis.reading import ReadOutcome, read_files


def new_workspace(formulas: str | None = None, keep_implausible: bool = False):
    """An empty Workspace over the built-in formula sets, or those of the file ``formulas`` (raises
    :class:`app.engine.FormulaFileError` naming the line of a bad file)."""
    from app.engine import Workspace

    return Workspace(formula_file=formulas, keep_implausible=keep_implausible)


def counters_needed(formulas: str | None) -> set[str] | None:
    """The counter columns a Workspace with these formulas reads (None: every counter, also when the file is bad:
    the Workspace made later says why)."""
    from app.engine import Workspace

    try:
        return set(Workspace(formula_file=formulas, cache=False).counters_needed())
    except Exception:  # noqa: BLE001 - reported where the workspace is made
        return None


def make_workspace(results: list, formulas: str | None, keep_implausible: bool = False):
    """A Workspace over already read results (unreadable ones skipped); ``keep_implausible``: see
    :class:`app.engine.Workspace`."""
    from app.engine import Workspace

    ws = Workspace(formula_file=formulas, keep_implausible=keep_implausible)
    ws.add_all([r for r in results if r.readable])
    return ws


def fresh_like(old: Any):
    """An empty Workspace with ``old``'s formula sets, formula file, cache and counter choice (the window's
    Close All)."""
    from app.engine import Workspace

    ws = Workspace(formula_sets=old.formula_sets, cache=old.cache,
                   counters="all" if old.counters_needed() is None else "used")
    ws.formula_file = old.formula_file
    return ws


@dataclass
class Loaded:
    """A Workspace that read its own files (:func:`load`) and the outcome of those reads."""

    workspace: Any
    read: ReadOutcome


def load(paths: list[str], formulas: str | None = None, keep_implausible: bool = False) -> Loaded:
    """A Workspace first (a bad ``formulas`` file raises :class:`app.engine.FormulaFileError` before any read),
    then ``paths`` read through the workspace cache with only the counters its formulas use, the readable ones
    added."""
    from app.engine import Workspace

    ws = Workspace(formula_file=formulas, keep_implausible=keep_implausible)
    got = read_files(paths, cached=True, counters=ws.counters_needed())
    ws.add_all([r for r in got.results if r.readable])
    return Loaded(ws, got)
