"""Selections: LPAR names -> node keys, and a side's window, nodes and shift -> :class:`app.engine.compare.Selection`."""

from __future__ import annotations

from typing import Any


def lpar_nodes(ws: Any, names: list[str] | None) -> tuple[tuple | None, list[str]]:
    """NodeKeys of the named LPARs (case-insensitive, on every CEC); returns (nodes or None for no names,
    the names not found)."""
    if not names:
        return None, []
    iv = ws.intervals
    pairs = iv[["cec", "lpar"]].drop_duplicates().astype(str) if len(iv) else None
    nodes, unknown = [], []
    for name in names:
        hit = pairs.loc[pairs["lpar"].str.upper() == name.upper()] if pairs is not None else []
        if not len(hit):
            unknown.append(name)
        for cec, lpar in hit.itertuples(index=False):
            nodes.append(("lpar", cec, lpar))
    return tuple(nodes), unknown


def lpar_names(ws: Any) -> list[str]:
    """The LPARs with counters in ``ws``, sorted (for a message naming what there is)."""
    iv = ws.intervals
    return sorted(set(iv["lpar"].astype(str))) if len(iv) else []


def window_problem(start: Any, end: Any, names: tuple[str, str] = ("--from", "--to")) -> str:
    """'' when the window ``(start, end]`` is usable, else the message (``names``: how the two bounds are
    called)."""
    if start is not None and end is not None and start >= end:
        return f"{names[0]} {start} is not before {names[1]} {end}"
    return ""


def make_selection(ws: Any, nodes: Any = None, start: Any = None, end: Any = None, hours: str | None = None,
                   days: str | None = None, name: str = "", shift: Any = None, tz: str = "utc"):
    """The engine Selection of a side: ``nodes`` (empty or None: everything), window, and the shift of
    ``hours``/``days`` texts read in ``tz`` (raises :class:`app.engine.shift.ShiftError` for bad ones) unless a
    ready ``shift`` is given."""
    from app.engine.compare import Selection
    from app.engine.shift import make_shift

    if shift is None:
        shift = make_shift(hours or None, days or None, tz=tz)
    return Selection(ws, nodes=tuple(nodes) if nodes else None, start=start, end=end, shift=shift, name=name)


def zoned(shift: Any, ws: Any, tz: str | None):
    """``shift`` read in ``tz`` (None: the workspace's default, local once a system's offset is known)."""
    import dataclasses

    tz = tz or ws.zones.default()
    return shift if shift is None or shift.tz == tz else dataclasses.replace(shift, tz=tz)
