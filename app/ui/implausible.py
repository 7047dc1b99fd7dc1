"""View > Keep implausible intervals: the window's switch for CPU-intervals that break a physical bound
(:mod:`app.engine.plausibility`), kept in the settings, and a status-bar label saying how many there are and
whether they are left out of the sums (issue 20)."""

from __future__ import annotations

from typing import Any

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QLabel

from app.ui import messages as M
from app.ui import settings

SETTING = "view/keep_implausible"


def implausible_count(findings: list[Any]) -> int:
    """CPU-intervals named by the engine's ``implausible`` findings (a finding per interval, and per file one
    finding counting the rest)."""
    return sum(int(f.key.get("count", 1)) for f in findings if getattr(f, "code", "") == "implausible")


def status_text(n: int, keep: bool) -> str:
    """The status-bar text for ``n`` implausible CPU-intervals ('' for none)."""
    if not n:
        return ""
    return (M.STATUS_KEPT if keep else M.STATUS_LEFT_OUT).format(n=n)


def apply_keep(ws: Any, keep: bool) -> None:
    """Set the workspace's switch (called in the view job, so no other job computes on it meanwhile)."""
    setter = getattr(ws, "set_keep_implausible", None)
    if setter is not None:
        setter(keep)


def install(w: Any) -> QAction:
    """Add the checkable View action (state from the settings) and the status-bar label to window ``w``."""
    act = QAction(M.ACT_KEEP_IMPLAUSIBLE, w)
    act.setCheckable(True)
    act.setToolTip(M.ACT_KEEP_IMPLAUSIBLE_TIP)
    act.setStatusTip(M.ACT_KEEP_IMPLAUSIBLE_TIP)
    act.setChecked(settings.get_bool(SETTING))
    w.keep_implausible = act.isChecked()
    label = QLabel("")
    label.setObjectName("implausible_label")
    w.statusBar().addPermanentWidget(label)
    w.implausible_label = label
    state = {"n": 0}

    def toggled(keep: bool) -> None:
        settings.set_value(SETTING, keep)
        w.keep_implausible = keep
        label.setText(status_text(state["n"], keep))
        if w.loaded():
            w.request(table=True, timeline=True)     # the tree's values follow in the next job

    def on_view(view: Any) -> None:
        if getattr(view, "findings", None) is not None:
            state["n"] = implausible_count(view.findings)
            label.setText(status_text(state["n"], w.keep_implausible))

    act.toggled.connect(toggled)
    w.runner.done.connect(on_view)
    w.actions_.view_menu.addAction(act)
    w.keep_implausible_action = act
    return act
