"""The application layer: files -> workspace -> selections -> comparison -> export request, for every front end.

The window (:mod:`app.ui`), every command (:mod:`app.commands`) and the exports (:mod:`app.export`) take
these steps from here instead of each doing its own:

* :mod:`app.analysis.reading`: read files once each (:func:`read_files`, the decoder or the workspace cache),
  collecting what went wrong as :class:`Message` data instead of printing it; :func:`failed_result` is the read
  result of a file whose reader raised.
* :mod:`app.analysis.workspace`: a :class:`app.engine.Workspace` over read results (:func:`make_workspace`),
  an empty one for a window (:func:`new_workspace`), one that reads its files itself (:func:`load`).
* :mod:`app.analysis.selection`: LPAR names -> node keys (:func:`lpar_nodes`), a side's time window, LPARs and
  shift -> :class:`app.engine.compare.Selection` (:func:`make_selection`).
* :mod:`app.analysis.comparison`: a before/after :class:`ComparisonRequest` -> :class:`ComparisonResult`
  (the comparison, or the outcome code and the messages saying why not).
* :mod:`app.analysis.request`: :class:`ExportRequest` (what to export: workspace, level, window, nodes, shift,
  comparison, title) and the plans that build one: :func:`plan_export` (files and options, the CLI's) and
  :func:`window_request` (what the window shows, its export dialog's).

Contract: no Qt, nothing printed, no ``sys.exit``; it imports the engine, the readers, the cache and the
top-level helper modules only (never :mod:`app.export`, :mod:`app.commands` or :mod:`app.ui`).  Outcomes are
data: a :class:`Message` list (kind ``error`` / ``problem`` / ``note`` / ``finding``) and a code
(:data:`OK`, :data:`BAD_REQUEST`, :data:`NOTHING_READABLE`: the CLI's exit codes 0, 2, 3).  The texts name
options as the CLI spells them (``--before-lpar``); a front end with fields passes its own names
(:data:`OptionNames`).
"""

from __future__ import annotations

from app.analysis.comparison import ComparisonRequest, ComparisonResult, SideSpec, build_comparison
from app.analysis.outcome import BAD_REQUEST, NOTHING_READABLE, OK, Message, OptionNames, cli_option
from app.analysis.reading import ReadOutcome, failed_result, read_files
from app.analysis.request import ExportPlan, ExportRequest, ExportSpec, NoComparison, plan_export, window_request
from app.analysis.selection import lpar_nodes, make_selection, zoned
from app.analysis.workspace import load, make_workspace, new_workspace

__all__ = ["ComparisonRequest", "ComparisonResult", "SideSpec", "build_comparison", "BAD_REQUEST",
           "NOTHING_READABLE", "OK", "Message", "OptionNames", "cli_option", "ReadOutcome", "failed_result",
           "read_files", "ExportPlan", "ExportRequest", "ExportSpec", "NoComparison", "plan_export",
           "window_request", "lpar_nodes", "make_selection", "zoned", "load", "make_workspace", "new_workspace"]
