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


LEVEL_COLUMNS = {"cec": ["cec"], "lpar": ["cec", "lpar"], "class": ["cec", "lpar", "class"],
                 "cpu": ["cec", "lpar", "class", "cpu"]}


def counter_nodes(ws: Any, level: str, pairs: Any = None) -> list[tuple]:
    """NodeKeys of the ``level`` ("cec", "lpar", "class" or "cpu") nodes with counters, in the tree's order (CEC,
    LPAR, class, CPU number: :func:`app.engine.tree.tree_ident`, the rows the window's tree is built from);
    ``pairs``: only those under these (cec, lpar) pairs.  LPARs known from partition data alone have none."""
    from app.engine.tree import tree_ident

    ident = ws.tree_ident() if hasattr(ws, "tree_ident") else tree_ident(ws.intervals)
    if not len(ident):
        return []
    rows = ident[LEVEL_COLUMNS[level]].drop_duplicates()
    if pairs is not None:
        want = {(str(c), str(lp)) for c, lp in pairs}
        rows = rows.loc[[(str(c), str(lp)) in want for c, lp in zip(rows["cec"], rows["lpar"])]]
    keys = []
    for r in rows.itertuples(index=False):
        vals = [str(v) for v in r]
        if level == "cpu":
            vals[-1] = int(r[-1])
        keys.append((level, *vals))
    return keys


def pick_lpars(ws: Any, names: list[str] | None) -> tuple[list[tuple], list[str], list[str]]:
    """(the LPAR NodeKeys named, case-insensitive, on every CEC, in the tree's order; the names not found; every
    LPAR name with counters, sorted).  No names: the first LPAR with counters (what the window selects first)."""
    lpars = counter_nodes(ws, "lpar")
    have = sorted({k[2] for k in lpars})
    if not names:
        return lpars[:1], [], have
    wanted = {n.upper() for n in names}
    chosen = [k for k in lpars if k[2].upper() in wanted]
    unknown = [n for n in names if not any(k[2].upper() == n.upper() for k in lpars)]
    return chosen, unknown, have


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
