"""Reading files once each, with what went wrong kept as data (:class:`ReadOutcome`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from app.analysis.outcome import Message


@dataclass
class ReadOutcome:
    """The read results of some paths (those whose reader raised are left out) and the messages about them."""

    results: list = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)

    @property
    def readable(self) -> bool:
        """At least one file held CPU MF data."""
        return any(r.readable for r in self.results)

    def nothing_readable(self, what: str | None = None) -> list[Message]:
        """The messages of a side with nothing readable: each result's findings, then the summary line
        (``what``: "before", "after", "given"; None: no word)."""
        out = [Message("finding", f.message, f.severity) for r in self.results for f in r.findings]
        where = f" in the {what} files" if what else ""
        return out + [Message("problem", f"nothing readable was found{where}")]


def read_files(paths: list[str], cache: dict | None = None, *, cached: bool = False,
               counters: Any = None, failed: Callable[[str, Exception], Any] | None = None) -> ReadOutcome:
    """Read ``paths``, each once per ``cache`` (a dict shared by calls: a file of both sides is read once).

    ``cached``: through the workspace cache (:func:`app.cache.read_file`, ``counters`` as there) instead of
    the decoder (:func:`app.formats.read_file`).  A reader that raises leaves the file out with a ``problem``
    message naming it (a reader bug never becomes a traceback); its message is given once per ``cache``;
    ``failed(path, exc)``, when given, makes the read result that stands for it instead (:func:`failed_result`).
    """
    if cached:
        from app.cache import read_file

        def read(path):
            return read_file(path, counters=counters)
    else:
        from app.formats import read_file as read

    out = ReadOutcome()
    cache = {} if cache is None else cache
    for path in paths:
        if path not in cache:
            try:
                cache[path] = read(path)
            except Exception as exc:  # noqa: BLE001 - a reader bug must not become a traceback
                out.messages.append(Message("problem", f"{path}: cannot be read ({type(exc).__name__}: {exc})"))
                cache[path] = failed(path, exc) if failed is not None else None
        r = cache[path]
        if r is not None:
            out.results.append(r)
    return out


def failed_result(path: str, what: str, hint: str, meta: dict | None = None):
    """An unreadable read result whose one ``error`` finding (code ``reader-failure``) says ``what`` happened
    to ``path`` (a read that raised) and ``hint`` what to do."""
    from app.findings import make_finding
    from app.formats.schema import ReadResult, empty_samples

    f = make_finding(str(path), None, "error", "reader-failure", what, hint)
    return ReadResult(file=str(path), kind="unknown", framing="none", records={}, samples=empty_samples(),
                      findings=[f], **({"meta": meta} if meta is not None else {}))

