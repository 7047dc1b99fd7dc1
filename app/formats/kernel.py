"""The SMF 113 reader's two hot loops, compiled when possible, pure numpy otherwise.

:mod:`app.formats._kernel` (a small C extension built by ``pip install``; see setup.py) walks an RDW chain and
converts big-endian counter fields at memory speed.  When it is not built, or when ``NESTSCOPE_KERNEL=0`` is set,
or inside :func:`pure`, the same results come from numpy (tests/formats/test_kernel.py compares both paths
column by column).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

try:
    from app.formats import _kernel as _c
except ImportError:        # not built (no compiler at install time): the numpy path serves
    _c = None

_enabled = os.environ.get("NESTSCOPE_KERNEL", "1").strip() not in ("0", "no", "off", "false")


def available() -> bool:
    """True when the compiled kernel is built and in use."""
    return _c is not None and _enabled


def name() -> str:
    """What serves the hot loops, for ``info`` and the benchmarks."""
    return "compiled (app.formats._kernel)" if available() else "numpy"


@contextmanager
def pure() -> Iterator[None]:
    """Run the block on the numpy path even when the kernel is built (tests and benchmarks compare the two)."""
    global _enabled
    old, _enabled = _enabled, False
    try:
        yield
    finally:
        _enabled = old


def gather_be(mat: np.ndarray, off: int, w: int, count: int) -> np.ndarray:
    """(rows x count) native uint64 of the big-endian ``w``-byte fields at ``off``, ``off+w``, ... of every row
    of the uint8 matrix ``mat`` (rows may be strided; bytes within a row must be adjacent)."""
    if available() and mat.ndim == 2 and mat.strides[1] == 1 and 1 <= w <= 8 and off + w * count <= mat.shape[1]:
        return gather_fields(mat, [(off + k * w, w) for k in range(count)])
    sub = mat[:, off:off + w * count]
    if w == 1:
        return sub.astype(np.uint64, order="C")
    try:
        v = sub.view(f">u{w}")          # rows keep their stride; only the last axis must be contiguous
    except ValueError:
        v = np.ascontiguousarray(sub).view(f">u{w}")
    return v.astype(np.uint64, order="C")


def rdw_offsets(buf, pos: int, stop: int, least: int) -> tuple[np.ndarray, int, int]:
    """Offsets of the RDW-framed records of ``buf`` from ``pos`` until the position reaches ``stop``.

    Returns ``(offsets, pos, status)``: status 0 = fewer than 4 bytes left (the walk is over), 1 = ``stop``
    reached (call again from ``pos``), -1 = the length at ``pos`` is below ``least`` (not a clean chain).
    """
    n = len(buf)
    if available():
        cap = max((min(stop, n) - pos) // max(least, 1) + 2, 16)
        out = np.empty(cap, np.int64)
        parts = []
        while True:
            k, pos, status = _c.rdw_walk(buf, pos, stop, least, out)
            parts.append(out[:k].copy())
            if status != 1 or pos >= stop:
                return (np.concatenate(parts) if len(parts) > 1 else parts[0]), pos, status
    offs: list[int] = []
    add = offs.append
    while True:
        if pos + 4 > n:
            status = 0
            break
        if pos >= stop:
            status = 1
            break
        length = (buf[pos] << 8) | buf[pos + 1]
        if length < least:
            status = -1
            break
        add(pos)
        pos += length
    return np.array(offs, np.int64), pos, status


def rdw_heads(buf, pos: int, stop: int, least: int, width: int) -> tuple[np.ndarray, np.ndarray, int, int]:
    """:func:`rdw_offsets` from ``pos`` to ``stop`` and :func:`rows_at` of the records found, ``(offsets, heads,
    pos, status)``: the step's pages mapped in one call before the walk and handed back after it
    (:mod:`app.formats.pages`), so walking a mapped file leaves none of its pages resident."""
    from app.formats import pages

    pages.populate(buf, pos, stop + 65536)
    offs, end, status = rdw_offsets(buf, pos, stop, least)
    heads = rows_at(buf, offs, width)
    pages.drop(buf, pos, end)
    return offs, heads, end, status


def _compiled_spec(mat: np.ndarray, fields: list[tuple[int, int]]) -> tuple[np.ndarray, np.ndarray] | None:
    """The int64 (offsets, widths) the compiled gather takes for ``fields`` of ``mat``'s rows, or None when the
    compiled path cannot serve them (not built or off, not a byte matrix with adjacent bytes in a row, a width
    outside 1..8, a field outside the row)."""
    if not (available() and fields and mat.ndim == 2 and mat.strides[1] == 1):
        return None
    offs = np.array([f[0] for f in fields], np.int64)
    widths = np.array([f[1] for f in fields], np.int64)
    if widths.min() < 1 or widths.max() > 8 or offs.min() < 0 or int((offs + widths).max()) > mat.shape[1]:
        return None
    return offs, widths


def gather_fields(mat: np.ndarray, fields: list[tuple[int, int]]) -> np.ndarray:
    """(rows x len(fields)) native uint64: the big-endian unsigned field ``(offset, width)`` of every row of the
    uint8 matrix ``mat``, all fields in one pass over the rows."""
    m, nf = mat.shape[0], len(fields)
    out = np.empty((m, nf), np.uint64)
    if not (m and nf):
        return out
    spec = _compiled_spec(mat, fields)
    if spec is not None:
        _c.gather_fields(mat, *spec, out)
        return out
    for j, (off, w) in enumerate(fields):
        if w == 1:
            out[:, j] = mat[:, off]
        else:
            out[:, j] = np.ascontiguousarray(mat[:, off:off + w]).view(f">u{w}").ravel()
    return out


BLOCK_BYTES = 1 << 20       # bytes of records per block of gather_blocks (684 of a z16's 1,530-byte records)
# the extract's blocks (``block``): a block's pages are what the gathers hold of a mapped file at once (issue 24:
# 512 KiB, 1.2-1.4 MB less at the extract's read peak for the same CPU; the window's read of a month took 0.97-1.12
# against 0.76-0.82 CPU s with them in a noisy run: it keeps 1 MiB)
EXTRACT_BLOCK_BYTES = 1 << 19
BLOCK_ROWS = 4096           # at most this many rows per block (short records)
THREAD_ROWS = 65536         # from this many rows gather_blocks splits the rows between two threads


class Differ(Exception):
    """A row of :func:`gather_blocks`' matrix differs from row 0 in the spans all its rows were to share."""


class ScatteredRows:
    """Records of one length at ascending offsets ``starts`` of ``buf`` that do not follow each other at one
    stride (a file of several record shapes: subtype 1 and 2 records interleaved): the (rows x length) matrix
    :func:`gather_blocks` reads a block of rows at a time, each block's records copied into a small buffer
    (their pages mapped before and handed back after), so neither a copy of the shape's records nor the pages of
    the whole buffer are held.  ``rows[i, a:b]`` is row ``i``'s bytes; :meth:`dense` the whole copy (for the
    numpy path)."""

    ndim = 2

    def __init__(self, buf, starts: np.ndarray, width: int) -> None:
        self.buf, self.starts, self.width = buf, np.ascontiguousarray(starts, np.int64), int(width)
        self.shape = (len(self.starts), self.width)

    def __getitem__(self, key):
        i, cols = key
        s = int(self.starts[i])
        return np.frombuffer(self.buf, np.uint8)[s:s + self.width][cols]

    def dense(self) -> np.ndarray:
        return rows_at(self.buf, self.starts, self.width)


def dense(mat) -> np.ndarray:
    """``mat`` as a numpy matrix (a :class:`ScatteredRows` copied out)."""
    return mat.dense() if isinstance(mat, ScatteredRows) else mat


def gather_blocks(mat: np.ndarray, jobs: list[list[tuple[int, int]]], *, buf=None, base: int = 0,
                  same: list[tuple[int, int]] = (), by_column: bool = False, block: int | None = None
                  ) -> list[np.ndarray] | None:
    """``[gather_fields(mat, fields) for fields in jobs]`` in one pass over blocks of about :data:`BLOCK_BYTES`
    of records (at most :data:`BLOCK_ROWS` rows: every job's fields of a block while its bytes are in the
    cache), the rows split between two threads when there are many (:func:`app.formats.pages.threads`); None,
    having done nothing, off the compiled path.

    ``buf``: the memory-mapped file ``mat`` is a view of (row r at byte ``base + r * mat.strides[0]``): each
    block's pages are mapped in one call before it is read and handed back once it is copied out
    (:mod:`app.formats.pages`), so the file's pages never stack up beside the gathered values: a block is the
    most of them resident at once (per thread), 1 MiB, not the 6 MB of 4,096 z16 records (issue 24: the
    extract's peak above the decoded chunk).  ``same``: spans
    ``(offset, width)`` every row must share with row 0, checked block by block (:func:`first_other_row`):
    :class:`Differ` is raised at the first block with a row that does not.  ``by_column``: each job's
    (rows x fields) result in column order (a field's values adjacent: the transpose of a C-order (fields x
    rows) array), each block gathered into a small row-order buffer and copied across while it is in the
    cache: a frame made of it holds each field as one contiguous array (pandas' own block layout), which
    Arrow takes without a copy (:mod:`app.dataset.tables`: a samples part's counters)."""
    from app.formats import pages

    m = mat.shape[0]
    scattered = isinstance(mat, ScatteredRows)
    like = np.empty((1, mat.shape[1]), np.uint8) if scattered else mat      # (the fields checked against a row)
    specs = [_compiled_spec(like, fields) for fields in jobs] if m else [None]
    if any(spec is None for spec in specs):
        return None
    if scattered:
        same = ()                       # (only the strided one-shape pass checks shared spans)
        buf, base = mat.buf, 0
    step, width = (0 if scattered else mat.strides[0]), mat.shape[1]
    same = [(o, w) for o, w in same if w > 0]
    if any(o < 0 or o + w > width for o, w in same):
        return None
    row0 = [bytes(mat[0, o:o + w]) for o, w in same]
    if by_column:
        outs = [np.empty((len(fields), m), np.uint64).T for fields in jobs]
    else:
        outs = [np.empty((m, len(fields)), np.uint64) for fields in jobs]
    rows = max(1, min(BLOCK_ROWS, (block or BLOCK_BYTES) // max(step, width, 1)))

    def run(r0: int, r1: int) -> None:
        tmp = [np.empty((min(rows, r1 - r0), len(fields)), np.uint64) for fields in jobs] if by_column else None
        held = np.empty((min(rows, r1 - r0), width), np.uint8) if scattered else None
        for a in range(r0, r1, rows):
            b = min(a + rows, r1)
            if scattered:
                st = mat.starts[a:b]
                lo, hi = int(st[0]), int(st[-1]) + width
                pages.populate(buf, lo, hi)
                blk = held[:b - a]
                _c.rows_at(buf, st, width, blk)
            else:
                lo, hi = base + a * step, base + (b - 1) * step + width
                pages.populate(buf, lo, hi)
                blk = mat[a:b]
            if same and (first_other_row(blk, same) >= 0
                         or any(bytes(mat[a, o:o + w]) != r for (o, w), r in zip(same, row0))):
                raise Differ()
            for j, ((offs, widths), out) in enumerate(zip(specs, outs)):
                if tmp is None:
                    _c.gather_fields(blk, offs, widths, out[a:b])
                else:
                    t = tmp[j][:b - a]
                    _c.gather_fields(blk, offs, widths, t)
                    out[a:b] = t
            # (the extract's last block: with the pages of a folio straddling its end, the next rows' in a split)
            pages.drop(buf, lo, hi, b == r1 and block is not None)
    if m < THREAD_ROWS or pages.threads() < 2:
        run(0, m)
        return outs
    half = (m // 2 + rows - 1) // rows * rows      # the halves keep the one-thread blocks
    failed: list[BaseException] = []

    def second() -> None:
        try:
            run(half, m)
        except BaseException as exc:  # noqa: BLE001 - raised again on the caller's thread
            failed.append(exc)
    th = threading.Thread(target=second, name="nestscope-gather", daemon=True)
    th.start()
    try:
        run(0, half)
    finally:
        th.join()
    if failed:
        raise failed[0]
    return outs


def rows_at(buf, offsets: np.ndarray, width: int) -> np.ndarray:
    """(len(offsets) x width) uint8: ``width`` bytes of ``buf`` from each offset (zero past the end of ``buf``):
    the headers of every record in one pass, checked column by column afterwards."""
    offsets = np.ascontiguousarray(offsets, np.int64)
    out = np.empty((len(offsets), width), np.uint8)
    if not (len(offsets) and width):
        return out
    if available():
        _c.rows_at(buf, offsets, width, out)
        return out
    u8 = np.frombuffer(buf, np.uint8)
    pos = offsets[:, None] + np.arange(width)
    inside = (pos >= 0) & (pos < len(u8))
    out[...] = np.where(inside, u8[np.clip(pos, 0, max(len(u8) - 1, 0))] if len(u8) else 0, 0)
    return out


def first_other_row(mat: np.ndarray, spans: list[tuple[int, int]]) -> int:
    """The first row of the uint8 matrix ``mat`` (rows may be strided) whose bytes in the spans ``(offset,
    width)`` differ from row 0's, or -1 when every row has row 0's bytes there: one pass, no copy of the rows."""
    m = mat.shape[0]
    spans = [(o, w) for o, w in spans if w > 0]
    if m < 2 or not spans:
        return -1
    offs = np.array([o for o, _ in spans], np.int64)
    widths = np.array([w for _, w in spans], np.int64)
    if available() and mat.ndim == 2 and mat.strides[1] == 1 and offs.min() >= 0 \
            and int((offs + widths).max()) <= mat.shape[1]:
        return int(_c.first_other_row(mat, offs, widths))
    differ = np.zeros(m, bool)
    for o, w in spans:
        sub = mat[:, o:o + w]
        differ |= (sub != sub[0]).any(axis=1)
    hit = np.flatnonzero(differ)
    return int(hit[0]) if len(hit) else -1


def low_times(buf, pos: int, stop: int, least: int, layout: np.ndarray, sids: np.ndarray, lows: np.ndarray,
              nsid: int) -> tuple[int, int, int] | None:
    """The compiled walk of an RDW chain that keeps the lowest sample time per system of the records of one type
    (``_kernel.rdw_low_times``: ``layout``, the int64 (type, type offset, subtype offset, system id offset,
    data-offset offset, time offset of subtype 1, of subtype 2); ``sids`` uint32 and ``lows`` uint64, their
    first ``nsid`` entries in use), ``(nsid, pos, status)``; None when the kernel is not built or is off (the
    caller walks with :func:`rdw_offsets` and :func:`rows_at`)."""
    if not has_low_times():
        return None
    return _c.rdw_low_times(buf, pos, stop, least, layout, sids, lows, nsid)


def has_low_times() -> bool:
    """The compiled kernel in use has ``rdw_low_times`` (a kernel built before it was added has not: the numpy
    walk serves until it is built again)."""
    return available() and hasattr(_c, "rdw_low_times")
