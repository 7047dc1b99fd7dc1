"""What the application layer says instead of printing: :class:`Message` and the outcome codes."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

OK, BAD_REQUEST, NOTHING_READABLE = 0, 2, 3     # equal to the CLI's exit codes (0 done, 2 usage, 3 nothing read)

# (side or None, option) -> the option's name in the front end's words, e.g. (before, lpar) -> --before-lpar
OptionNames = Callable[["str | None", str], str]


def cli_option(side: str | None, what: str) -> str:
    """The CLI's spelling of an option: ``--before-lpar``, ``--from``, ``--formulas``."""
    return f"--{side}-{what}" if side else f"--{what}"


@dataclass(frozen=True)
class Message:
    """One thing a front end tells the user.

    ``kind``: ``error`` (the request cannot be made), ``problem`` (a file left out, or nothing readable),
    ``note`` (the result is made but may surprise) or ``finding`` (a reader finding of an unreadable file;
    ``severity`` is its severity).  ``text`` holds names from the data as they are: the front end escapes them
    (:func:`app.textsafe.display_text`).
    """

    kind: str
    text: str
    severity: str = ""

    def line(self) -> str:
        """The message as the CLI prints it after ``nestscope CMD: `` (a finding: ``[severity] text``)."""
        if self.kind == "finding":
            return f"[{self.severity}] {self.text}"
        return {"error": "error: ", "note": "note: "}.get(self.kind, "") + self.text
