"""Workspace files: the open files, the tree selection, the time window and the comparison in a small JSON file.

No Qt here.  Paths are stored absolute and, beside them, relative to the workspace file, so a folder moved with
its workspace still opens.  Example::

    {"nestscope_workspace": 1, "files": ["/data/a.smf"], "files_relative": ["a.smf"],
     "selection": [["lpar", "3931-123F5", "ZOSA"]], "window": ["2026-11-02T08:00:00+00:00", null],
     "comparison": null}
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from app.fileio import replace, same_file

if TYPE_CHECKING:
    import pandas as pd

VERSION = 1
SUFFIX = ".nsw.json"
FILTER = "NestScope workspace (*.nsw.json *.json)"


class WorkspaceFileError(ValueError):
    """A workspace file that cannot be used; the message names the file and the problem."""


@dataclass
class WorkspaceState:
    files: list[str] = field(default_factory=list)
    selection: list[tuple] = field(default_factory=list)
    start: pd.Timestamp | None = None
    end: pd.Timestamp | None = None
    comparison: Any = None   # whatever the comparison view saves (JSON-able), None when there is none


def _ts(t: pd.Timestamp | None) -> str | None:
    if t is None:
        return None
    import pandas as pd   # here, not at the top: the window's first paint imports this module (issue 23)

    t = pd.Timestamp(t)
    return (t.tz_localize("UTC") if t.tzinfo is None else t.tz_convert("UTC")).isoformat()


def _key(k: list) -> tuple:
    """A node key from JSON: the CPU number of a CPU key (the core id of an SMT core key) is an int again."""
    out: list = [str(x) for x in k]
    if out and out[0] in ("cpu", "core") and len(out) == 5:
        out[4] = int(out[4])
    return tuple(out)


def dumps(state: WorkspaceState, where: str | Path) -> str:
    base = Path(where).resolve().parent
    rel = []
    for f in state.files:
        try:
            rel.append(os.path.relpath(Path(f).resolve(), base))
        except ValueError:   # another drive (Windows)
            rel.append(None)
    doc = {"nestscope_workspace": VERSION, "files": [str(Path(f).resolve()) for f in state.files],
           "files_relative": rel, "selection": [list(k) for k in state.selection],
           "window": [_ts(state.start), _ts(state.end)] if state.start is not None and state.end is not None
           else None, "comparison": state.comparison}
    return json.dumps(doc, indent=1, default=str) + "\n"


def save(state: WorkspaceState, path: str | Path) -> None:
    """Write atomically (temp file + rename); raises WorkspaceFileError with a sentence naming the file when it
    cannot be written (a read-only folder, or on Windows the file held open by another program)."""
    path = Path(path)
    if any(same_file(path, f) for f in state.files):       # never over a data file the workspace opens
        raise WorkspaceFileError(f"{path.name}: is one of the workspace's data files; choose another name")
    tmp = path.with_name(path.name + ".tmp")
    try:
        tmp.write_text(dumps(state, path), encoding="utf-8")
        replace(tmp, path)      # tried again for a moment while Windows holds the file open
    except OSError as e:
        tmp.unlink(missing_ok=True)
        raise WorkspaceFileError(f"{path.name}: cannot be saved ({e.strerror or e})") from e


def load(path: str | Path) -> WorkspaceState:
    """Read a workspace file; raises WorkspaceFileError with a sentence naming the file."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise WorkspaceFileError(f"{path.name}: cannot be read ({e.strerror or e})") from e
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise WorkspaceFileError(f"{path.name}: not a NestScope workspace (not JSON: {e})") from e
    if not isinstance(doc, dict) or "nestscope_workspace" not in doc:
        raise WorkspaceFileError(f"{path.name}: not a NestScope workspace (no 'nestscope_workspace' field)")
    try:
        files = []
        rel = doc.get("files_relative") or []
        for i, f in enumerate(doc.get("files") or []):
            p = Path(str(f))
            if not p.exists() and i < len(rel) and rel[i]:
                alt = (path.resolve().parent / str(rel[i]))
                p = alt if alt.exists() else p
            files.append(str(p))
        selection = [_key(list(k)) for k in doc.get("selection") or []]
        window = doc.get("window")
        start = end = None
        if window and window[0] and window[1]:
            import pandas as pd

            start, end = pd.Timestamp(window[0]), pd.Timestamp(window[1])
    except (TypeError, ValueError, IndexError) as e:
        raise WorkspaceFileError(f"{path.name}: damaged workspace ({e})") from e
    return WorkspaceState(files, selection, start, end, doc.get("comparison"))
