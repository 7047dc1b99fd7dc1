"""A before/after comparison from files and options: :func:`build_comparison`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.analysis.outcome import BAD_REQUEST, NOTHING_READABLE, OK, Message, OptionNames, cli_option
from app.analysis.reading import read_files
from app.analysis.selection import lpar_names, lpar_nodes, make_selection, window_problem, zoned
from app.analysis.workspace import counters_needed, make_workspace

SIDES = ("before", "after")


@dataclass
class SideSpec:
    """One side as asked for: its files, window ``(start, end]`` (UTC), LPAR names (None: all) and shift texts
    (``hours`` such as "08-17", ``days`` such as "mon-fri"; None: every interval)."""

    files: list[str]
    start: Any = None
    end: Any = None
    lpars: list[str] | None = None
    hours: str | None = None
    days: str | None = None


@dataclass
class ComparisonRequest:
    """Both sides, the rows (``by``: "lpar" or "class"), the formula file, ``keep_implausible`` and the zone
    ``tz`` the shift hours and days are read in (None: each workspace's default, local once an offset is
    known)."""

    before: SideSpec
    after: SideSpec
    by: str = "lpar"
    formulas: str | None = None
    keep_implausible: bool = False
    tz: str | None = None
    # levels of the before side's selection metrics (beside ``by``) that its own thread computes once its
    # Workspace is made, while the after side is still read (a deck: its timelines' "lpar_interval")
    prepare: tuple[str, ...] = ()
    # called on the before side's thread with its selection once its levels are prepared (beside the after side's
    # read; a deck: its chart slides' data made ahead), when that side has a thread of its own
    before_ready: Any = None
    # called on the caller's thread once both sides' Workspaces are made (their reads and intervals done), before
    # the selections are compared (a deck: the cache's held writes let go)
    sides_ready: Any = None
    # called on the before side's thread once its work is done (after ``before_ready``), with a function telling
    # whether the caller's thread is still reading the after side or making its Workspace, when that side has a
    # thread of its own (a deck: the cache's held writes written on it meanwhile)
    before_idle: Any = None

    def side(self, name: str) -> SideSpec:
        return self.before if name == "before" else self.after


@dataclass
class ComparisonResult:
    """The :class:`app.engine.compare.Comparison` (None when it could not be made), the outcome code
    (:data:`OK`, :data:`BAD_REQUEST`, :data:`NOTHING_READABLE`) and the messages, in the order they arose."""

    comparison: Any = None
    code: int = OK
    messages: list[Message] = field(default_factory=list)

    def fail(self, code: int, *messages: Message) -> ComparisonResult:
        self.messages.extend(messages)
        self.comparison, self.code = None, code
        return self


def build_comparison(req: ComparisonRequest, cache: dict | None = None,
                     names: OptionNames = cli_option) -> ComparisonResult:
    """Check the request, read both sides (a file of both read once; ``cache`` as :func:`read_files`), build
    one Workspace per distinct set of files, resolve the selections and compare.  ``names`` spell the options in
    the messages."""
    from app.engine import FormulaFileError
    from app.engine.compare import compare
    from app.engine.shift import ShiftError, make_shift

    out = ComparisonResult()
    for side in SIDES:
        s = req.side(side)
        problem = window_problem(s.start, s.end, (names(side, "from"), names(side, "to")))
        if problem:
            return out.fail(BAD_REQUEST, Message("error", problem))
    try:
        shifts = {side: make_shift(req.side(side).hours, req.side(side).days) for side in SIDES}
    except ShiftError as exc:
        return out.fail(BAD_REQUEST, Message("error", str(exc)))
    cache = {} if cache is None else cache
    need = counters_needed(req.formulas)     # read through the workspace cache, only what the formulas read
    reads, made = _read_sides(req, cache, need, lambda ws: _prepare_before(req, ws, shifts["before"]),
                              req.before_idle)
    for side in SIDES:
        out.messages += reads[side].messages
    workspaces: dict = {}
    chosen = {}
    for side in SIDES:
        got = reads[side]
        if not got.readable:
            return out.fail(NOTHING_READABLE, *got.nothing_readable(side))
        key = tuple(sorted(r.file for r in got.results))
        if key not in workspaces:
            try:
                ws = made.get(side)
                if isinstance(ws, BaseException):
                    raise ws
                workspaces[key] = ws if ws is not None else make_workspace(got.results, req.formulas,
                                                                           req.keep_implausible)
            except FormulaFileError as exc:
                return out.fail(BAD_REQUEST, Message("error", f"{names(None, 'formulas')} {exc}"))
        chosen[side] = workspaces[key]
    if req.sides_ready is not None:
        req.sides_ready()
    sels = {}
    for side in SIDES:
        ws, s = chosen[side], req.side(side)
        nodes, unknown = lpar_nodes(ws, s.lpars)
        if unknown:
            return out.fail(BAD_REQUEST, Message("error", f"{names(side, 'lpar')} {', '.join(unknown)}: not in the "
                                                          f"{side} files (LPARs with counters: "
                                                          f"{', '.join(lpar_names(ws)) or 'none'})"))
        # hours and days in the --tz zone
        sels[side] = make_selection(ws, nodes, s.start, s.end, shift=zoned(shifts[side], ws, req.tz), name=side)
    c = compare(sels["before"], sels["after"], by=req.by)
    for side in SIDES:
        rows = c.table.loc[c.table["row"] == side]
        if not rows["generation"].notna().any():
            out.messages.append(Message("note", f"the {side} selection holds no intervals (check its window, LPARs "
                                                "and shift); its rows, ratios and deltas stay empty"))
    out.comparison = c
    return out


def _prepare_before(req: ComparisonRequest, ws: Any, shift: Any) -> None:
    """Compute the before side's selection metrics at ``req.by`` and ``req.prepare`` into ``ws``'s frame cache (the
    selection as :func:`build_comparison` makes it: the same frames, computed earlier on the before side's thread).
    Whatever goes wrong is left for :func:`build_comparison` to find and tell."""
    s = req.before
    try:
        nodes, unknown = lpar_nodes(ws, s.lpars)
        if unknown:
            return
        sel = make_selection(ws, nodes, s.start, s.end, shift=zoned(shift, ws, req.tz), name="before")
        for by in dict.fromkeys((req.by, *req.prepare)):
            sel.metrics(by)
        if req.before_ready is not None:
            req.before_ready(sel)
    except Exception:  # noqa: BLE001 - the caller's thread computes them again and reports
        pass


def _read_sides(req: ComparisonRequest, cache: dict, need: Any,
                prepare: Any = None, idle: Any = None) -> tuple[dict, dict]:
    """Both sides' reads ({side: ReadOutcome}) and the workspaces made beside them ({side: Workspace or the
    exception making it raised}; a side left out is made by the caller).

    When the sides share no file and there are two threads (:func:`app.engine.parallel.threads`), the before side
    is read and its intervals computed on a second thread while this one reads the after side (the gzip inflate,
    the cache's Parquet and the reader's kernel run without the GIL): the sides' decodes and interval passes
    overlap instead of following each other.  Each side is then the same reads and the same Workspace as one after
    the other (a file of both sides would be read once and shared: those sides stay on one thread).  ``prepare(ws)``:
    run on the before side's thread once its Workspace is made (the before side's metrics while the after side,
    the larger read in a comparison of months, is still decoded on this one); the after side's Workspace is made on
    this thread before it waits for that one.  ``idle(busy)``: run on the before side's thread after that, ``busy()``
    true until this thread has the after side's Workspace (or gave up on it)."""
    import contextvars
    import threading

    from app.engine.parallel import threads

    files = {side: list(req.side(side).files) for side in SIDES}
    made: dict = {}
    if threads() < 2 or set(files["before"]) & set(files["after"]) or not files["before"] or not files["after"]:
        return {side: read_files(files[side], cache, cached=True, counters=need) for side in SIDES}, made
    box: dict = {}
    after_busy = threading.Event()
    after_busy.set()

    def read_and_make(side: str):
        """The side's read, and its Workspace made in ``made`` (or the exception making it raised)."""
        got = read_files(files[side], cache, cached=True, counters=need)
        if got.readable:
            try:
                made[side] = make_workspace(got.results, req.formulas, req.keep_implausible)
            except Exception as exc:  # noqa: BLE001 - raised again where the sequential path makes it
                made[side] = exc
        return got

    def before() -> None:
        try:
            box["read"] = read_and_make("before")
            if prepare is not None and "before" in made and not isinstance(made["before"], Exception):
                prepare(made["before"])
            if idle is not None:
                idle(after_busy.is_set)
        except BaseException as exc:  # noqa: BLE001 - raised again on the caller's thread
            box["error"] = exc
    ctx = contextvars.copy_context()     # the caller's context (shared shift rows, samples kept or not)
    th = threading.Thread(target=ctx.run, args=(before,), name="nestscope-before-side", daemon=True)
    th.start()
    # what this read raises (a stop signal, a cancel) is raised at once: the before side, a daemon thread, ends
    # its read on its own and nothing waits for it
    try:
        # the after side's Workspace too before waiting for the before side's thread (which goes on with that
        # side's metrics and what its ``prepare`` makes ahead): its intervals are computed beside that work
        after = read_and_make("after")
    finally:
        after_busy.clear()
    th.join()
    if "error" in box:
        raise box["error"]
    return {"before": box["read"], "after": after}, made
