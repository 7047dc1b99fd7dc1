"""Findings: what readers and the engine say about the data they were given.

A finding names the file and the byte offset, says what happened and what it
means for the numbers.  Readers and the engine return findings; they never
print them and never raise for bad data.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

SEVERITIES = ("info", "warning", "error")


@dataclass(frozen=True, slots=True)
class Finding:
    """One data-health observation.

    ``message`` is the full sentence shown to analysts:
    ``<file>: offset <n> (0x<hex>): <what happened>; <what it means>``.
    ``key`` holds the system / cpu / interval the finding affects, when known.
    """

    file: str
    offset: int | None
    severity: str
    code: str
    message: str
    key: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["key"] = {k: (str(v) if not isinstance(v, (int, float, str, type(None))) else v)
                    for k, v in self.key.items()}
        return d


def make_finding(file: str, offset: int | None, severity: str, code: str,
                 what: str, meaning: str = "", **key: Any) -> Finding:
    """Build a finding with the house message form."""
    if severity not in SEVERITIES:
        raise ValueError(f"unknown severity {severity!r}")
    where = f"offset {offset} (0x{offset:X})" if offset is not None else "whole file"
    text = f"{file}: {where}: {what}"
    if meaning:
        text += f"; {meaning}"
    return Finding(file=file, offset=offset, severity=severity, code=code,
                   message=text, key={k: v for k, v in key.items() if v is not None})
