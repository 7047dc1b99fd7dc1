"""A file read in chunks of records, for ``extract`` (issue 24): decoded memory bounded by a chunk, not the file.

:func:`read_chunks` yields one :class:`~app.formats.schema.ReadResult` per chunk.  A plain (not compressed, not
tersed) SMF file whose records are a clean chain of RDWs from its first byte is cut at record boundaries every
``chunk_bytes`` (the RDW chain is walked; each chunk's bytes are copied for the reader): each chunk is decoded by
the same reader as a whole file, its ``offset`` column and its findings' offsets are those of the whole file, and
the pages of a memory-mapped file are handed back to the kernel once its chunk is copied.  ``meta["more"]`` is
True on every chunk but the last.  Every other file (gzip, terse, MONWRITE, blocked or damaged framing) is read
whole, as one chunk: :func:`chunked` says which way a file goes.

File-level checks see one chunk at a time: a record that repeats one of another chunk is not dropped by the
reader (the dataset keeps every sample once by its identity, whatever brought it), and findings that are only
counted past a number of details are counted per chunk.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Collection, Iterator

from app.findings import Finding
from app.formats.schema import ReadResult

__all__ = ["CHUNK_BYTES", "chunk_bytes", "chunked", "drop_pages", "read_chunks"]

CHUNK_BYTES = 32 << 20          # input bytes per chunk (NESTSCOPE_EXTRACT_CHUNK_MB overrides)


def chunk_bytes() -> int:
    """Input bytes per chunk: ``NESTSCOPE_EXTRACT_CHUNK_MB`` (MB, at least 1) or :data:`CHUNK_BYTES`."""
    raw = os.environ.get("NESTSCOPE_EXTRACT_CHUNK_MB", "").strip()
    try:
        return max(1, int(float(raw) * (1 << 20))) if raw else CHUNK_BYTES
    except ValueError:
        return CHUNK_BYTES


def chunked(data) -> bool:
    """True when ``data`` is cut in chunks: plain SMF with a clean RDW chain from offset 0."""
    from app.formats import terse
    from app.formats.monwrite_blocks import looks_like_monwrite
    from app.formats.smf_framing import detect_framing_at

    if len(data) < 64 or data[:2] == b"\x1f\x8b" or terse.looks_tersed(data) or looks_like_monwrite(data):
        return False
    return detect_framing_at(data) == ("rdw", 0)


def _shift(f: Finding, pos: int) -> Finding:
    if f.offset is None or not pos:
        return f
    old = f"{f.file}: offset {f.offset} (0x{f.offset:X}): "
    new_off = f.offset + pos
    msg = f.message
    if msg.startswith(old):
        msg = f"{f.file}: offset {new_off} (0x{new_off:X}): " + msg[len(old):]
    return Finding(file=f.file, offset=new_off, severity=f.severity, code=f.code, message=msg, key=dict(f.key))


def drop_pages(data, start: int, end: int) -> None:
    """Hand the pages of ``data[start:end]`` back to the kernel (a memory-mapped file only; they are read from
    the file again should anything look at them)."""
    if not isinstance(data, mmap.mmap) or not hasattr(mmap, "MADV_DONTNEED"):
        return
    a = start - start % mmap.PAGESIZE
    try:
        data.madvise(mmap.MADV_DONTNEED, a, end - a)
    except (OSError, ValueError):
        pass


def read_chunks(data, file: str, *, counters: Collection[str] | None = None,
                size: int | None = None, chunk: int | None = None) -> Iterator[ReadResult]:
    """Decode ``data`` (bytes or a read-only map of ``file``) a chunk of records at a time (module docstring).

    ``counters`` as for :func:`app.formats.read_bytes`; ``chunk`` input bytes per chunk (default
    :func:`chunk_bytes`).  Each result's ``size`` is ``size`` (default: the whole data's length)."""
    from app.formats import kernel, read_bytes
    from app.formats.smf_resync import MIN_LEN

    n = len(data)
    size = n if size is None else size
    step = chunk or chunk_bytes()
    if n <= step or not chunked(data):
        r = read_bytes(data, file, counters=counters)
        r.size = size
        yield r
        return
    pos = 0
    while pos < n:
        _offs, end, status = kernel.rdw_offsets(data, pos, pos + step, MIN_LEN)
        if status < 0 or end <= pos:        # the chain breaks here: the rest is read in one piece
            end = n
        end = min(end, n)
        piece = data[pos:end]               # a copy of the chunk's bytes (the reader wants bytes)
        drop_pages(data, pos, end)
        r = read_bytes(piece, file, counters=counters)
        del piece
        if pos:
            if len(r.samples):
                r.samples["offset"] = r.samples["offset"].to_numpy() + pos
            if r.partitions is not None and "offset" in r.partitions.columns:
                r.partitions["offset"] = r.partitions["offset"].to_numpy() + pos
            r.findings = [_shift(f, pos) for f in r.findings]
        r.size = size
        r.meta["more"] = end < n              # another chunk follows
        yield r
        pos = end
