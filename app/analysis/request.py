"""What to export (:class:`ExportRequest`) and the two ways a front end makes one: from files and options
(:func:`plan_export`, the CLI's ``export``) and from what the window shows (:func:`window_request`, its
export dialog's).  The writers (:func:`app.export.export`) take the request."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from app.analysis.comparison import ComparisonRequest, build_comparison
from app.analysis.outcome import BAD_REQUEST, NOTHING_READABLE, OK, Message, OptionNames, cli_option
from app.analysis.reading import read_files
from app.analysis.selection import lpar_nodes, window_problem, zoned
from app.analysis.workspace import counters_needed, make_workspace

DEFAULT_TITLE = "CPU MF analysis"


@dataclass
class ExportRequest:
    """What to export.

    ``workspace``: :class:`app.engine.Workspace`; ``by``: the level of the main table
    (``interval``, ``cpu``, ``class``, ``lpar``, ``cec`` or ``pool``, the CEC pools: CSV rows, the PPTX summary table);
    ``start``/``end``: window (UTC, intervals ending in ``(start, end]``); ``nodes``: NodeKeys
    to restrict to (None = all); ``shift``: :class:`app.engine.shift.ShiftFilter`;
    ``comparison``: :class:`app.engine.compare.Comparison` (adds Compare sheet / slides; a CSV
    then holds the comparison table); ``title``: deck / workbook title; ``also_shift``: a shift filter of hours
    (e.g. the night, 22-06) that a deck sets against each side's own shift (one table slide per side);
    ``cpu_sheet``: the workbook's ``CPU intervals`` sheet (one row per logical CPU and interval: a month of one
    CEC is 368,640 rows and most of the workbook's time and size) is written only when True; its About sheet
    says when it was left out; ``profile``: ``hour``, ``weekday`` or ``hour-weekday`` adds the profile (:mod:`app.export.profile`) as a
    "Profile" sheet (XLSX) or slides with the heat maps (PPTX).
    """

    workspace: Any
    by: str = "lpar"
    start: Any = None
    end: Any = None
    nodes: tuple | None = None
    shift: Any = None
    comparison: Any = None
    title: str = DEFAULT_TITLE
    subtitle: str = ""
    also_shift: Any = None
    profile: str | None = None
    cpu_sheet: bool = False
    tz: str = "utc"           # zone of the CSV's times (app.engine.timezone: utc, local or an IANA name)

    def metrics(self, by: str | None = None, summary: bool = False):
        """The request's metrics frame at a level (window, nodes and shift applied; the workspace keeps each
        frame it computed, shifted ones too, so the sheets and slides that show one frame compute it once)."""
        from app.engine.shift import shifted_metrics

        return shifted_metrics(self.workspace, by=by or self.by, start=self.start, end=self.end,
                               nodes=list(self.nodes) if self.nodes is not None else None, shift=self.shift,
                               summary=summary)

    def selection(self, name: str = ""):
        """The request's window, nodes and shift as one :class:`app.engine.compare.Selection` (a deck's shift
        slides)."""
        from app.engine.compare import Selection

        return Selection(self.workspace, self.nodes, self.start, self.end, self.shift, name=name)

    def input_paths(self) -> list[str]:
        """Every input file of the request (workspace and both comparison sides)."""
        paths = [r.meta.get("path") or r.file for r in self.workspace.files]
        c = self.comparison
        if c is not None:
            for sel in (c.before, c.after):
                paths += [r.meta.get("path") or r.file for r in sel.workspace.files]
        return list(dict.fromkeys(paths))


@dataclass
class ExportSpec:
    """An export asked for by files and options (the CLI's ``export``): ``files`` (empty: the comparison's
    files), the level ``by``, window, LPAR names, shift texts, ``also_hours`` (a deck's second shift), title,
    formula file, ``keep_implausible``, the ``comparison`` to add (None: none) and whether the target is a deck
    (``deck``: ``also_hours`` needs one)."""

    files: list[str]
    by: str = "lpar"
    start: Any = None
    end: Any = None
    lpars: list[str] | None = None
    hours: str | None = None
    days: str | None = None
    also_hours: str | None = None
    title: str = DEFAULT_TITLE
    formulas: str | None = None
    keep_implausible: bool = False
    comparison: ComparisonRequest | None = None
    deck: bool = False
    target: str = ""
    profile: str | None = None
    tz: str | None = None
    cpu_sheet: bool = False


@dataclass
class ExportPlan:
    """The :class:`ExportRequest` (None when it cannot be made), the outcome code and the messages."""

    request: ExportRequest | None = None
    code: int = OK
    messages: list[Message] = field(default_factory=list)

    def fail(self, code: int, *messages: Message) -> ExportPlan:
        self.messages.extend(messages)
        self.request, self.code = None, code
        return self


def plan_export(spec: ExportSpec, names: OptionNames = cli_option) -> ExportPlan:
    """Check the options, build the comparison (if any), read the files (each once: those of the comparison are
    not read again), make the Workspace and resolve the LPARs into the request."""
    from app.engine import FormulaFileError
    from app.engine.shift import ShiftError, make_shift

    out = ExportPlan()
    problem = window_problem(spec.start, spec.end, (names(None, "from"), names(None, "to")))
    if problem:
        return out.fail(BAD_REQUEST, Message("error", problem))
    try:
        shift = make_shift(spec.hours, spec.days)
        also = make_shift(spec.also_hours, None) if spec.also_hours else None
    except ShiftError as exc:
        return out.fail(BAD_REQUEST, Message("error", str(exc)))
    if also is not None and not spec.deck:
        return out.fail(BAD_REQUEST, Message("error", f"{names(None, 'also-shift')} adds slides to a deck (.pptx), "
                                                      f"not to {spec.target}"))
    if spec.profile and not spec.target.lower().endswith((".xlsx", ".pptx")):
        return out.fail(BAD_REQUEST, Message("error", f"{names(None, 'profile')} adds a sheet (.xlsx) or slides "
                                                      f"(.pptx), not {spec.target}; for CSV use `nestscope report "
                                                      f"--by {spec.profile} --format csv`"))
    cache: dict = {}
    comparison = None
    if spec.comparison is not None:
        req = spec.comparison
        if spec.deck and not req.prepare:
            # the deck's timelines (pptx_compare: the LPARs' interval rows): the before side's computed on its
            # thread beside the after side's read
            req = dataclasses.replace(req, prepare=("lpar_interval",))
        got = build_comparison(req, cache, names)
        out.messages += got.messages
        if got.comparison is None:
            return out.fail(got.code)
        comparison = got.comparison
    paths = list(spec.files) or list(dict.fromkeys(spec.comparison.before.files + spec.comparison.after.files))
    # through the workspace cache, only the counters the formulas read (as report and the window)
    read = read_files(paths, cache, cached=True, counters=counters_needed(spec.formulas))
    out.messages += read.messages
    if not read.readable:
        return out.fail(NOTHING_READABLE, *read.nothing_readable("given"))
    ws = None
    if comparison is not None and not spec.files and not spec.lpars and not spec.profile \
            and spec.target.lower().endswith((".pptx", ".csv")):
        # a deck or CSV of the comparison's own files: the sides' workspaces instead of a third one (app.analysis.sides)
        from app.analysis.sides import export_workspace
        ws = export_workspace(read.results, comparison,
                              lambda: make_workspace(read.results, spec.formulas, spec.keep_implausible),
                              spec.formulas, spec.keep_implausible)
    try:
        ws = ws if ws is not None else make_workspace(read.results, spec.formulas, spec.keep_implausible)
    except FormulaFileError as exc:
        return out.fail(BAD_REQUEST, Message("error", f"{names(None, 'formulas')} {exc}"))
    nodes, unknown = lpar_nodes(ws, spec.lpars)
    if unknown:
        return out.fail(BAD_REQUEST, Message("error", f"{names(None, 'lpar')} {', '.join(unknown)}: not in the files"))
    tz = spec.tz or (ws.default_zone() if hasattr(ws, "default_zone") else ws.zones.default())
    out.request = ExportRequest(ws, by=spec.by, start=spec.start, end=spec.end, nodes=nodes,
                                shift=zoned(shift, ws, tz), comparison=comparison, title=spec.title,
                                also_shift=zoned(also, ws, tz), profile=spec.profile, tz=tz,
                                cpu_sheet=spec.cpu_sheet)
    return out


class NoComparison(ValueError):
    """A comparison export was asked for while no comparison is set."""


def window_request(ws: Any, what: str, by: str, title: str = "", start: Any = None, end: Any = None,
                   nodes: Any = (), comparison: Any = None, describe: dict | None = None,
                   profile: str | None = None) -> ExportRequest:
    """The request for what a window shows: ``what`` is ``table`` (the selected ``nodes`` over the window
    ``start``/``end``), ``comparison`` (the comparison's table and both sides' nodes; raises
    :class:`NoComparison` without one; ``describe``: the sides' one-line descriptions for the subtitle) or
    ``deck`` (every LPAR, with the comparison when one is set); ``profile``: see :class:`ExportRequest` (table
    and deck)."""
    title = title.strip() or DEFAULT_TITLE
    if what == "comparison":
        if comparison is None:
            raise NoComparison("no comparison is set (tree: right-click, 'Set as before' and 'Set as after')")
        both = tuple(dict.fromkeys([*(comparison.before.nodes or ()), *(comparison.after.nodes or ())])) or None
        desc = describe or {}
        sub = f"before: {desc.get('before', '')}  |  after: {desc.get('after', '')}"
        return ExportRequest(ws, by=by, nodes=both, comparison=comparison, title=title, subtitle=sub)
    if what == "deck":
        return ExportRequest(ws, by=by, comparison=comparison, title=title, profile=profile)
    return ExportRequest(ws, by=by, start=start, end=end, nodes=tuple(nodes) or None, title=title, profile=profile)
