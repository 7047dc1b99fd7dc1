"""A file read in chunks of records, for ``extract`` (issue 24): decoded memory bounded by a chunk, not the file.

:func:`read_chunks` yields one :class:`~app.formats.schema.ReadResult` per chunk, each cut at a record (or block)
boundary every ``chunk_bytes`` of (decompressed) data and decoded by the same reader as a whole file; its
``offset`` column and its findings' offsets are those of the whole (decompressed) data.  ``meta["more"]`` is
True on every chunk but the last.  What is streamed:

* a plain SMF file whose records are a clean chain of RDWs from its first byte: the RDW chain is walked in
  the memory-mapped file and each chunk decoded from it in place (a window of the map, no copy), its pages
  mapped a slice at a time and handed back to the kernel as the whole-file reader does (:mod:`app.formats.pages`);
* a plain SMF file of blocks (BDW, spanned VBS segments): cut before a block whose first segment starts a
  record, or after the last segment of a spanned record (never inside one);
* a gzip or tersed file holding either (:func:`app.formats.gunzip_pieces`: decompressed a piece at a time,
  never whole): the gzip findings (damage, cut, trailing bytes) come with the chunk being read when they occur,
  the size cap and the expansion ratio count the bytes decompressed so far.  Repeated records are not dropped
  while decompressing (:mod:`app.formats.stream_dedup` keeps a whole file small in memory; a chunk is small
  anyway): the reader drops those of one chunk, the dataset keeps every sample once by its identity.

A decompressed stream and a plain blocked file go through an unnamed temporary file (:class:`app.formats.pages.Spool`,
``NESTSCOPE_SPOOL_DIR`` or the system's temporary folder; about a chunk at a time): each chunk's bytes are
gathered there, not in the heap, and decoded from a map of it whose pages the reader maps a block at a time and
hands back, as a plain RDW file's are.  The extract's read of blocks also puts a chunk's records back to back in
a temporary file before they are decoded (:func:`app.formats.smf113._spooled_records`).

* MONWRITE (valid blocks from the first byte, or RDW-wrapped; plain, or in a gzip or tersed file): walked block
  by block over the whole stream, its finished intervals decoded a chunk at a time
  (:mod:`app.formats.monwrite_stream`; a compressed stream is spooled to an unnamed temporary file first, its
  walk reads at random; an RDW-wrapped stream is deblocked into another first).

When the (decompressed) data's chain breaks (damage), the rest is read in one piece.  Every other file (nested
gzip, ASCII or packed MONWRITE transfers, damaged framing at the start, or data within one chunk) is read whole, as one
chunk: :func:`chunked` says which plain SMF files are cut.

File-level checks see one chunk at a time: a record that repeats one of another chunk is not dropped by the
reader (the dataset keeps every sample once by its identity, whatever brought it), and findings that are only
counted past a number of details are counted per chunk.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Collection, Iterator

from app.findings import Finding, make_finding
from app.formats.pages import Spool, drop as drop_pages
from app.formats.schema import ReadResult

__all__ = ["CHUNK_BYTES", "chunk_bytes", "chunked", "stream_mode", "drop_pages", "read_chunks"]

CHUNK_BYTES = 32 << 20          # input bytes per chunk (NESTSCOPE_EXTRACT_CHUNK_MB overrides)
DECIDE_BYTES = 1 << 20          # (decompressed) bytes looked at to decide whether a stream is cut in chunks
_PIECE = 8 << 20                # bytes of a plain blocked file copied at a time
_BROKEN = -1


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


def stream_mode(head) -> str | None:
    """How data starting with ``head`` is cut: ``"rdw"`` (a clean RDW chain from its first byte), ``"blocked"``
    (BDW blocks from its first byte), or None (not cut: read whole)."""
    from app.formats import terse
    from app.formats.monwrite_blocks import looks_like_monwrite
    from app.formats.smf_framing import detect_framing_at

    if len(head) < 64 or head[:2] == b"\x1f\x8b" or terse.looks_tersed(head) or looks_like_monwrite(head):
        return None
    return {("rdw", 0): "rdw", ("bdw", 0): "blocked"}.get(detect_framing_at(head))


def _block_end(buf, step: int, final: bool, drop=None):
    """Where a chunk of blocks of ``buf`` ends: before the first block at or past ``step`` whose first segment
    is a whole record or a record's first segment; or, in a block that starts with the last segment of a
    spanned record (VBS: QSAM fills each block, so most blocks do), after that segment: the chunk ends with
    the block cut to that one segment, the rest of the block (behind a descriptor of its new length) starts
    the next chunk, so no record is cut and none is read twice (returned as (cut, segment length)).  None:
    more data is needed; :data:`_BROKEN`: a block descriptor is not valid (the rest is read in one piece).
    ``drop(buf, start, end)``: called for the bytes walked past every :data:`_WALK` bytes (a map's pages)."""
    n, p, dropped = len(buf), 0, 0
    while p + 8 <= n:
        if drop is not None and p - dropped > _WALK:     # (a map's pages walked past handed back)
            drop(buf, dropped, p)
            dropped = p
        if buf[p] & 0x80:                    # extended BDW: 31-bit length
            bl = int.from_bytes(bytes(buf[p:p + 4]), "big") & 0x7FFFFFFF
        elif buf[p + 2] or buf[p + 3]:
            return _BROKEN
        else:
            bl = (buf[p] << 8) | buf[p + 1]
        if bl < 8:
            return _BROKEN
        ctl = buf[p + 6]
        if p >= step and not ctl & 0x80:
            if ctl & 0x03 in (0, 1):
                return p
            sl = (buf[p + 4] << 8) | buf[p + 5]
            if ctl & 0x03 == 2 and 4 < sl and 4 + sl < bl <= n - p:
                return p, sl
        if p + bl > n:
            break
        p += bl
    return n if final else None


def _bdw(like: int, length: int) -> bytes:
    """A block descriptor of ``length`` in the form of the one whose first byte is ``like``."""
    return (length | 0x80000000).to_bytes(4, "big") if like & 0x80 else length.to_bytes(2, "big") + b"\0\0"


_OFFSET = re.compile(r"\boffset (\d+)(?: \(0x[0-9A-F]+\))?")


def _shift(f: Finding, pos: int) -> Finding:
    """The finding ``f`` of a chunk read from ``pos``: its offset and every offset its message names (where it
    resumed, where a valid block starts...) are those of the whole data."""
    if f.offset is None or not pos:
        return f

    def moved(m: re.Match) -> str:
        o = int(m.group(1)) + pos
        return f"offset {o} (0x{o:X})" if m.group(0).endswith(")") else f"offset {o}"
    return Finding(file=f.file, offset=f.offset + pos, severity=f.severity, code=f.code,
                   message=f"{f.file}: " + _OFFSET.sub(moved, f.message[len(f.file) + 2:])
                   if f.message.startswith(f"{f.file}: ") else _OFFSET.sub(moved, f.message), key=dict(f.key))


def _read_at(piece, pos: int, file: str, counters, by_column: bool = False) -> ReadResult:
    """``piece`` (the data from offset ``pos``: a chunk of a plain SMF file or stream, as bytes or as a window of
    the mapped file) decoded by the whole file's SMF reader (the file's kind was found from its start: a chunk is
    not recognised again, so one that starts like a gzip member, a TERSE header or a MONWRITE block is still
    read as the SMF records it is), with its sample and partition offsets and its findings' offsets moved to
    those of the whole data."""
    from app.formats import memory_refusal
    from app.formats.smf113 import read_smf

    r = memory_refusal(piece, file, len(piece)) or read_smf(piece, file, counters=counters, by_column=by_column)
    if pos:
        if len(r.samples):
            r.samples["offset"] = r.samples["offset"].to_numpy() + pos
        if r.partitions is not None and "offset" in r.partitions.columns:
            r.partitions["offset"] = r.partitions["offset"].to_numpy() + pos
        r.findings = [_shift(f, pos) for f in r.findings]
    return r


def read_chunks(data, file: str, *, counters: Collection[str] | None = None,
                size: int | None = None, chunk: int | None = None, by_column: bool = False) -> Iterator[ReadResult]:
    """Decode ``data`` (bytes or a read-only map of ``file``) a chunk of records at a time (module docstring).

    ``counters`` and ``by_column`` as for :func:`app.formats.read_bytes`; ``chunk`` input bytes per chunk
    (default :func:`chunk_bytes`).  Each result's ``size`` is ``size`` (default: the whole data's length)."""
    from app.formats import kernel, read_bytes
    from app.formats.smf_resync import MIN_LEN

    n = len(data)
    size = n if size is None else size
    step = chunk or chunk_bytes()
    if n > 64 and data[:2] == b"\x1f\x8b":
        yield from _gzip_chunks(data, file, counters, size, step, by_column)
        return
    from app.formats import terse

    if n > 64 and terse.looks_tersed(data):
        yield from _terse_chunks(data, file, counters, size, step, by_column)
        return
    from app.formats.monwrite_stream import HEAD, monwrite_chunks, rdw_chunks, streamable

    mw = streamable(data[:HEAD]) if n > step else None
    if mw is not None:
        yield from (rdw_chunks if mw == "monwrite-rdw" else monwrite_chunks)(data, file, step, size, mw)
        return
    if n > step and not chunked(data) and stream_mode(data[:DECIDE_BYTES]) == "blocked":
        spool = Spool("nestscope-chunk-")
        try:
            yield from _cut_spooled(spool, _map_pieces(data), "blocked", file, counters, size, step, str,
                                    lambda: [], by_column)
        finally:
            spool.close()
        return
    if n <= step or not chunked(data):
        r = read_bytes(data, file, counters=counters, by_column=by_column)
        r.size = size
        yield r
        return
    pos = 0
    while pos < n:
        end = _chain_end(data, pos, pos + step)
        r = read_window(data, pos, end, file, counters, by_column)
        r.size = size
        r.meta["more"] = end < n              # another chunk follows
        yield r
        pos = end


def read_window(data, start: int, end: int, file: str, counters=None, by_column: bool = False) -> ReadResult:
    """The SMF records of ``data[start:end]`` (a plain file's bytes or its read-only map) decoded from a window
    of the data, not a copy: the reader maps its pages a block of records at a time and hands them back
    (pages.py); offsets are those of the whole data (:func:`_read_at`)."""
    with memoryview(data) as mv:
        piece = mv[start:end]
    try:
        return _read_at(piece, start, file, counters, by_column)
    finally:
        _let_go(piece)


_WALK = 2 << 20             # bytes of a chunk's RDW chain walked (its pages mapped, then handed back) at a time


def _chain_end(data, pos: int, stop: int) -> int:
    """Where the chunk of RDW records of ``data`` from ``pos`` ends: after the first record starting at or past
    ``stop``, or at the end of ``data`` (the chain ends or breaks there: the rest is read in one piece).  The
    chain is walked :data:`_WALK` bytes at a time, each slice's pages mapped before and handed back after
    (:func:`app.formats.kernel.rdw_heads`), so the walk never holds the chunk's pages."""
    from app.formats import kernel
    from app.formats.smf_resync import MIN_LEN

    n, p = len(data), pos
    while True:
        _offs, _heads, p, status = kernel.rdw_heads(data, p, min(stop, p + _WALK), MIN_LEN, 0)
        if status != 1 or p >= stop:
            break
    if status < 0 or p <= pos:          # the chain breaks here: the rest is read in one piece
        return n
    return min(p, n)


def _let_go(view: memoryview) -> bool:
    """Release a window of the data (so the map can be closed, the buffer cut); False when it is still exported
    (held by what the reader returned, which it never should): it is then left to the garbage collector."""
    try:
        view.release()
        return True
    except BufferError:
        return False


def _map_pieces(data) -> Iterator[bytes]:
    """The bytes of a plain file a piece at a time (the pages of a mapped file handed back once copied)."""
    for a in range(0, len(data), _PIECE):
        box = [bytes(data[a:a + _PIECE])]
        drop_pages(data, a, a + len(box[0]))
        yield box.pop()                 # (not held here while the reader works)


def _gzip_chunks(data, file: str, counters, size: int, step: int, by_column: bool = False) -> Iterator[ReadResult]:
    """A gzip file decompressed a piece at a time and cut in chunks of ``step`` decompressed bytes, when what
    it holds is plain SMF (RDW or blocks); else read whole."""
    from app.formats import gunzip_pieces

    found: list[Finding] = []
    stop: list[str] = []
    yield from _streamed(data, file, counters, size, step, gunzip_pieces(data, file, found, stop),
                         lambda f: f + "+gzip", lambda: _drain(file, found, stop), stop, by_column)


def _terse_chunks(data, file: str, counters, size: int, step: int, by_column: bool = False) -> Iterator[ReadResult]:
    """A tersed data set untersed a piece at a time (on a thread, :func:`app.formats.terse.unterse` writes its
    output a piece at a time) and cut in chunks, when it holds plain SMF; else read whole."""
    import queue
    import threading

    from app.formats import max_bytes, max_ratio, terse

    hdr = terse.parse_header(data)
    q: queue.Queue = queue.Queue(maxsize=2)
    quit_ = threading.Event()
    box: dict = {}
    stop: list[str] = []
    found: list[Finding] = []

    def put(item) -> None:
        while not quit_.is_set():
            try:
                q.put(item, timeout=0.1)
                return
            except queue.Full:
                continue

    def run() -> None:
        try:
            box["info"] = terse.unterse(data, file, write=lambda mv: put(bytes(mv)), cap=max_bytes(),
                                        ratio=max_ratio(), cancel=quit_.is_set)[1]
        except BaseException as exc:  # noqa: BLE001 - handed to the reading thread
            box["exc"] = exc
        finally:
            put(None)

    def pieces() -> Iterator[bytes]:
        t = threading.Thread(target=run, name="unterse", daemon=True)
        t.start()
        try:
            while True:
                item = q.get()
                if item is None:
                    break
                yield item
            t.join()
            if "exc" in box:
                raise box.pop("exc")
            info = box.get("info")
            if info is not None:
                found.extend(info.findings)
                if info.stop:
                    stop.append(info.stop)
        finally:
            quit_.set()

    yield from _streamed(data, file, counters, size, step, pieces(),
                         lambda f: f"terse {hdr.mode} + {f.upper()}", lambda: _drain(file, found, stop), stop,
                         by_column)


def _drain(file: str, found: list[Finding], stop: list[str]) -> list[Finding]:
    """The source's findings since last asked; a size-cap or ratio stop as an error finding."""
    out = list(found)
    del found[:]
    if stop:            # the chunks before were read (a whole file's read stops before any record)
        out.append(make_finding(file, None, "error", "too-large", stop.pop(),
                                "decompression stopped there; the records before it were read"))
    return out


def _streamed(data, file: str, counters, size: int, step: int, src: Iterator[bytes], framing: Callable[[str], str],
              extra: Callable[[], list[Finding]], stop: list[str], by_column: bool = False) -> Iterator[ReadResult]:
    """Decompressed pieces ``src`` of ``data``: cut in chunks when its first ``step`` bytes say plain SMF, else
    ``data`` read whole by the whole-file reader (small, not plain SMF, or stopped early)."""
    from app.formats import read_bytes
    from app.formats.monwrite_stream import HEAD, monwrite_chunks, rdw_chunks, streamable

    # the stream's first bytes (more than a chunk, to know whether it is cut at all) go to an unnamed temporary
    # file as they come, not the heap; its first DECIDE_BYTES / HEAD bytes decide how it is read
    spool = Spool("nestscope-chunk-")
    try:
        head = b""
        for piece in src:
            if len(head) < max(DECIDE_BYTES, HEAD):
                head += bytes(piece[:max(DECIDE_BYTES, HEAD) - len(head)])
            spool.add(piece)
            del piece
            if spool.n > max(step, HEAD):
                break
        mode = stream_mode(head[:DECIDE_BYTES]) if spool.n > step and not stop else None
        mw = streamable(head[:HEAD]) if mode is None and spool.n > step and not stop else None
        del head
        if mw is not None:
            # MONWRITE: its walk reads at random; the whole decompressed stream is spooled, then mapped
            for piece in src:
                spool.add(piece)
            mm = spool.map()
            try:
                yield from (rdw_chunks if mw == "monwrite-rdw" else monwrite_chunks)(mm, file, step, size,
                                                                                   framing(mw), extra)
            finally:
                mm.close()
            return
        if mode is None:
            src.close()
            spool.close()
            r = read_bytes(data, file, counters=counters, by_column=by_column)
            r.size = size
            yield r
            return
        yield from _cut_spooled(spool, src, mode, file, counters, size, step, framing, extra, by_column)
    finally:
        spool.close()



def _walked_rdw_end(mm, step: int, final: bool):
    """Where a chunk of RDW records of ``mm`` (a map) ends: after the first record starting at or past ``step``;
    None: more data is needed; :data:`_BROKEN`: the chain breaks.  Walked :data:`_WALK` bytes at a time, each
    slice's pages mapped before and handed back after (:func:`app.formats.kernel.rdw_heads`): finding where a
    chunk ends never holds its pages."""
    from app.formats import kernel
    from app.formats.smf_resync import MIN_LEN

    n, p = len(mm), 0
    while True:
        _offs, _heads, p, status = kernel.rdw_heads(mm, p, min(step, p + _WALK), MIN_LEN, 0)
        if status != 1 or p >= step:
            break
    if status < 0:
        return _BROKEN
    if status == 0 or p > n:            # the records read end before ``step`` or the last one is cut
        return n if final else None
    return p


def _walked_block_end(mm, step: int, final: bool):
    """:func:`_block_end` over a mapped chunk, the pages it walked past handed back as it goes."""
    try:
        return _block_end(mm, step, final, drop_pages)
    finally:
        drop_pages(mm, 0, len(mm))


def _cut_spooled(spool: Spool, src: Iterator[bytes], mode: str, file: str, counters, size: int, step: int,
                 framing: Callable[[str], str], extra: Callable[[], list[Finding]], by_column: bool = False
                 ) -> Iterator[ReadResult]:
    """Decode a stream of bytes (``src``) in chunks cut at record (``mode`` "rdw") or block ("blocked")
    boundaries every ``step`` bytes, through ``spool``: each chunk's bytes gathered in the file, its end found
    and the chunk decoded from a map of it (a window, no copy; its pages mapped a block at a time and handed
    back), what follows it kept for the next.  ``extra()`` gives the findings of the source since it was last
    asked (they go with the chunk being read); ``framing`` names a chunk's framing from what the reader found.
    A chunk of blocks that ends in a block starting with the last segment of a spanned record (VBS) ends after
    that segment: the block's descriptor is rewritten in the file to that one segment, and the rest of the
    block, behind a descriptor of its new length, starts the next chunk (:func:`_block_end`)."""
    end_of = _walked_rdw_end if mode == "rdw" else _walked_block_end
    base = 0
    done = False
    whole = False                       # the chain broke: the rest is read in one piece

    def more() -> bool:
        nonlocal done
        if done:
            return False
        try:
            piece = next(src)
        except StopIteration:
            done = True
            return False
        spool.add(piece)
        return True

    while True:
        while (whole or spool.n <= step) and more():
            pass
        if not spool.n:                 # (only when the stream ended)
            return
        while True:
            mm = spool.map()
            end = len(mm) if whole else end_of(mm, step, done)
            if end == _BROKEN:
                whole = True
            elif end is not None:
                break
            mm.close()
            if whole:
                while more():
                    pass
            elif not more():
                continue            # the stream ended: the end is found again as the data's final bytes
        while not done and end == spool.n:      # whether anything follows this chunk
            mm.close()
            more()
            mm = spool.map()
        prefix = b""
        if isinstance(end, tuple):      # a block cut after its first segment (sl bytes), VBS
            p, sl = end
            like = mm[p]
            bl = (int.from_bytes(mm[p:p + 4], "big") & 0x7FFFFFFF) if like & 0x80 else (mm[p] << 8) | mm[p + 1]
            prefix = _bdw(like, bl - sl)
            spool.patch(p, _bdw(like, 4 + sl))
            end, moved = p + 4 + sl, p + sl
        else:
            moved = end
        with memoryview(mm) as mv:
            piece = mv[:end]
        try:
            r = _read_at(piece, base, file, counters, by_column)
        finally:
            _let_go(piece)
        r.findings = [*extra(), *r.findings]
        r.framing = framing(r.framing)
        r.size = size
        last = done and end == spool.n and not prefix
        r.meta["more"] = not last
        base += moved
        if last:
            mm.close()
            yield r
            return
        yield r
        del r                           # (what follows the chunk is kept once the chunk's result is let go)
        spool.keep_from(mm, end, prefix)
