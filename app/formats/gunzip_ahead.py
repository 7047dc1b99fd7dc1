"""Decompress a big gzip file with the inflate on a second thread (:func:`gunzip_ahead`), for :func:`app.formats.gunzip`.

:func:`app.formats.gunzip` inflates a piece, appends it to the output, lets the duplicate-record filter
(:mod:`app.formats.stream_dedup`) check the new records, then inflates the next piece: one thread does both, one
after the other.  Here :func:`app.formats.gunzip_pieces` runs on a second thread (zlib inflates without the GIL)
and hands its pieces over through a short queue while this thread appends and filters them: the two overlap.

The pieces are the same; what could differ is the size limit and the ratio check (and the offsets some findings
name), which :func:`gunzip_pieces` decides on the output kept so far.  One thread ahead, it counts every byte it
gave (it cannot wait for the filter); that is the output kept exactly as long as the filter removed nothing.  So
the first time the filter removes a record before the last piece, this stops and returns None: the caller
decompresses the file again the ordinary way (a file with repeated records, rare outside damage and bombs, costs
the part decompressed up to there once more; a bomb's first repeats come within its first pieces).  What the
final check of the filter removes, after every piece was given, changes nothing of the pieces.

Clean gzip (no finding, no stop: most files) is inflated first by :func:`app.formats.clean_inflate.clean_pieces`,
with zlib-ng when it imports (about 2.8 times stdlib zlib's speed); when the command line started inflating this
very file already (:mod:`app.formats.prefetch`, during the command's imports), its pieces are taken from there
instead: the same generator over the same file.  At the first thing that is not clean, the file is decompressed
again from its start by :func:`app.formats.gunzip_pieces` on the second thread (stdlib zlib: its findings and the
bytes it salvages are the ordinary ones); a damaged file costs the clean part inflated once more.
"""

from __future__ import annotations

import queue
import sys
import threading

from app.findings import Finding
from app.formats.clean_inflate import UNCLEAN, clean_pieces

PIPELINE_FROM = 4 << 20       # compressed bytes from which the inflate runs ahead on a second thread
DEPTH = 8                     # pieces the inflate may run ahead (a piece: what 64 KiB of gzip expands to)
CLEAN_DEPTH = 4               # pieces the clean inflate may run ahead (a piece: at most 8 MiB)
_END = object()


def gunzip_ahead(raw, file: str, dedup, *, cap: int | None = None, ratio: int | None = None,
                 cancel=None) -> tuple[bytearray, list[Finding], str | None] | None:
    """:func:`app.formats.gunzip` of ``raw`` with the filter ``dedup`` (a fresh
    :class:`app.formats.stream_dedup.StreamDedup`), the inflate on a second thread; None (``dedup`` then holds a
    partial state: the caller makes a new one) when the filter removed a record before the last piece.

    Clean gzip is inflated by :func:`app.formats.clean_inflate.clean_pieces` (zlib-ng when it imports): the
    pieces the command line's prefetch inflated, else on a thread of its own.  At the first thing that is not
    clean the file is decompressed again from its start, on the second thread, by
    :func:`app.formats.gunzip_pieces` (stdlib zlib: its findings, salvage and stops)."""
    from app.formats import gunzip_pieces, max_bytes, max_ratio

    cap = max_bytes() if cap is None else cap
    ratio = max_ratio() if ratio is None else ratio
    prefetch = sys.modules.get("app.formats.prefetch")      # imported only where the command line started it
    ahead = prefetch.take(raw, file, cap, ratio) if prefetch is not None else None
    if ahead is not None:               # clean gzip inflated ahead
        got = _consume(lambda: ahead.get(cancel), ahead.drop, [], [], dedup)
    else:
        got = _threaded(lambda: clean_pieces(raw, cap, ratio, cancel=cancel), [], [], dedup, CLEAN_DEPTH)
    if got is not UNCLEAN:
        return got
    dedup.__init__()                    # not clean gzip: the ordinary inflate, from the start
    found: list[Finding] = []
    stop: list[str] = []
    return _threaded(lambda: gunzip_pieces(raw, file, found, stop, cap=cap, ratio=ratio, cancel=cancel),
                     found, stop, dedup, DEPTH)


def _threaded(pieces_of, found: list[Finding], stop: list[str], dedup, depth: int):
    """:func:`_consume` of the pieces of the generator ``pieces_of()`` makes, run on a second thread that runs at
    most ``depth`` pieces ahead."""
    pieces: queue.Queue = queue.Queue(maxsize=depth)
    halt = threading.Event()
    failed: list[BaseException] = []

    def give(item) -> bool:
        while not halt.is_set():
            try:
                pieces.put(item, timeout=0.05)
                return True
            except queue.Full:
                continue
        return False

    def inflate() -> None:
        try:
            for piece in pieces_of():
                if not give(piece):
                    return
        except BaseException as exc:  # noqa: BLE001 - raised again on the caller's thread (Cancelled too)
            failed.append(exc)
        give(_END)

    th = threading.Thread(target=inflate, name="nestscope-inflate", daemon=True)
    th.start()

    def finish() -> None:
        halt.set()
        while th.is_alive():
            try:
                pieces.get(timeout=0.05)
            except queue.Empty:
                pass
        th.join()
        if failed:
            raise failed[0]
    return _consume(pieces.get, finish, found, stop, dedup)


def _consume(get, finish, found: list[Finding], stop: list[str], dedup):
    """Append the pieces ``get()`` gives (until ``_END``) and filter them; ``finish()`` at the end, always (it
    stops the inflate and raises what it raised).  (data, findings, stop sentence); None when the filter removed a
    record before the last piece; :data:`UNCLEAN` when ``get()`` gave that (the data is not clean gzip)."""
    out = bytearray()
    ended: object = _END
    try:
        while True:
            piece = get()
            if piece is _END:
                break
            if piece is UNCLEAN:
                ended = UNCLEAN
                break
            out += piece
            del piece
            dedup.step(out)
            if dedup.count:              # the inflate counted removed bytes as kept: not the ordinary result
                ended = None
                break
    finally:
        finish()
    if ended is not _END:
        return ended
    if not stop:
        dedup.step(out, final=True)
    return out, found, (stop[0] if stop else None)
