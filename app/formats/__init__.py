"""Bytes -> counter samples.  No Qt, no metrics.

``read_file`` is the one entry point: it reads the file once (never writes it),
undoes gzip, recognises the kind of data by validating its structure (never by
the file name) and hands the bytes to the SMF 113 or the MONWRITE reader.
"""

from __future__ import annotations

import gzip
import zlib
from collections.abc import Callable
from pathlib import Path

from app.findings import make_finding
from app.formats.schema import Cancelled, ReadResult, empty_samples

__all__ = ["Cancelled", "ReadResult", "read_file", "read_bytes"]

Progress = Callable[[float], None]
Cancel = Callable[[], bool]

_MAGIC = [
    (b"%PDF", "a PDF document"),
    (b"PK\x03\x04", "a ZIP archive (unzip it first)"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"BZh", "a bzip2 archive (decompress it first)"),
    (b"\xfd7zXZ", "an xz archive (decompress it first)"),
]


def _unknown(file: str, size: int, framing: str, what: str, meaning: str, code: str) -> ReadResult:
    f = make_finding(file, 0, "error", code, what, meaning)
    return ReadResult(file=file, kind="unknown", framing=framing, records={}, samples=empty_samples(),
                      findings=[f], size=size)


def read_file(path: str | Path, progress: Progress | None = None, cancel: Cancel | None = None) -> ReadResult:
    """Read one SMF or MONWRITE file (gzip allowed).  Never raises for bad data."""
    file = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        return _unknown(file, 0, "none", f"cannot be read ({exc.strerror or exc})",
                        "check the path and permissions", "unreadable-file")
    return read_bytes(data, file, progress=progress, cancel=cancel)


def read_bytes(data: bytes, file: str, progress: Progress | None = None,
               cancel: Cancel | None = None) -> ReadResult:
    """Recognise and decode ``data`` read from ``file``."""
    size = len(data)
    suffix = ""
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.decompress(data)
        except (OSError, EOFError, zlib.error) as exc:
            data = _gunzip_partial(data)
            if not data:
                return _unknown(file, size, "gzip", f"is a gzip file that cannot be decompressed ({exc})",
                                "nothing could be read; download the file again", "bad-gzip")
        suffix = "+gzip"
    if not data:
        return _unknown(file, size, "none", "is empty (0 bytes)",
                        "nothing to read; check the transfer", "empty-file")
    for magic, what in _MAGIC:
        if data.startswith(magic):
            return _unknown(file, size, "none", f"is {what}, not SMF or MONWRITE data",
                            "nothing was read from it", "wrong-file-type")
    from app.formats import monwrite, smf113  # local: keep import of the package light

    if monwrite.looks_like_monwrite(data):
        result = monwrite.read_monwrite(data, file, progress=progress, cancel=cancel)
    else:
        result = smf113.read_smf(data, file, progress=progress, cancel=cancel)
    if suffix:
        result.framing += suffix
        result.meta["decompressed_size"] = len(data)
    result.size = size
    return result


def _gunzip_partial(data: bytes) -> bytes:
    """Decompress as much of a damaged or cut gzip stream as possible."""
    d = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        return d.decompress(data)
    except zlib.error:
        return b""


def check_cancel(cancel: Cancel | None) -> None:
    """Raise Cancelled when the caller asked to stop."""
    if cancel is not None and cancel():
        raise Cancelled()
