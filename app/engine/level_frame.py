"""Every node's metric rows of one interval level and time window, kept by the workspace (moved out of
``workspace.py``, which prepares them, to keep that module under its size limit)."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from app.engine.aggregate import NodeKey

__all__ = ["NODE_COLS", "LevelFrame"]

NODE_COLS = ("cec", "lpar", "class", "cpu")    # NodeKey values after the level name


class LevelFrame:
    """Every node's metric rows of one interval level and time window: the interval rows and their whole-window
    summary rows in the report order (``with_summary``), and per node depth the row positions of each node.

    A node's rows are the rows ``metrics(by, nodes=[node], summary=True)`` computes on its own: the level's
    aggregation groups rows by node (and bucket), so a group's sums do not depend on the other nodes, and the
    report order is a stable sort on the node columns, so the node's rows keep their order in the whole frame."""

    def __init__(self, frame: pd.DataFrame, cols: tuple[str, ...] = NODE_COLS) -> None:
        self.frame = frame
        self.cols = cols          # the columns of a NodeKey's values (a CEC pool's: cec, class)
        self.summary = frame["summary"].to_numpy(dtype=bool) if len(frame) else np.zeros(0, bool)
        self._index: dict[int, dict[tuple, np.ndarray]] = {}

    def positions(self, nodes: Iterable[NodeKey]) -> np.ndarray | None:
        """Ascending row positions of ``nodes`` (None: a node this frame cannot answer, or one without rows)."""
        parts = []
        for key in nodes:
            depth = len(key) - 1
            cols = list(self.cols[:depth])
            if depth < 1 or any(c not in self.frame.columns for c in cols):
                return None
            idx = self._index.get(depth)
            if idx is None:
                g = self.frame.groupby(cols, sort=False, observed=True, dropna=False).indices
                idx = self._index[depth] = {(k if isinstance(k, tuple) else (k,)): np.asarray(v, np.int64)
                                            for k, v in g.items()}
            p = idx.get(tuple(key[1:]))
            if p is None:
                return None
            parts.append(p)
        if not parts:
            return None
        return parts[0] if len(parts) == 1 else np.unique(np.concatenate(parts))

    def rows(self, nodes: Iterable[NodeKey] | None, summary: bool) -> pd.DataFrame | None:
        """The rows of ``nodes`` (None: every node), with or without the summary rows; None when it cannot tell."""
        pos = np.arange(len(self.frame)) if nodes is None else self.positions(nodes)
        if pos is None or not len(pos):
            return None
        if not summary:
            pos = pos[~self.summary[pos]]
        return self.frame.take(pos).reset_index(drop=True)
