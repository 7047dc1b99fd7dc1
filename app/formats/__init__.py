"""Bytes -> counter samples.  No Qt, no metrics.

``read_file`` is the one entry point: it opens the file once (never writes it),
refuses what is not a regular file (a FIFO or a device would block or never
end), maps or reads it once (the content digest comes from the same bytes),
undoes gzip member by member in a streaming way with a size cap, unterses a
tersed data set (AMATERSE PACK / SPACK, :mod:`app.formats.terse`) the same way,
recognises the kind of data by validating its structure (never by the file
name) and hands the bytes to the SMF 113 or the MONWRITE reader.

Memory bound: the decompressed data of one file is capped at
``NESTSCOPE_MAX_BYTES`` (default 4 GiB; accepts suffixes K, M, G); a gzip
stream that expands more than ``NESTSCOPE_MAX_RATIO`` times (default 1000) once
past 256 MiB is stopped as a decompression bomb (0 switches the ratio check
off).  Both stops are findings that name the variable to raise.  A plain file
is memory-mapped, not copied.
"""

from __future__ import annotations

import hashlib
import mmap
import os
import stat
import zlib
from collections.abc import Callable, Collection, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from app.fileio import open_read_flags, read_head
from app.findings import Finding, make_finding

if TYPE_CHECKING:
    from app.formats.schema import Cancelled, ReadResult
    from app.formats.stream_dedup import StreamDedup

__all__ = ["Cancelled", "ReadResult", "read_file", "read_bytes", "open_data", "max_bytes"]


def __getattr__(name: str):
    """``Cancelled`` and ``ReadResult`` of :mod:`app.formats.schema`, imported when first asked for: the schema
    imports pandas, and the gzip inflate (:mod:`app.formats.prefetch`, started before the command's modules
    import) needs none of it."""
    if name in ("Cancelled", "ReadResult"):
        from app.formats import schema

        return getattr(schema, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

Progress = Callable[[float], None]
Cancel = Callable[[], bool]

GIB = 1 << 30
DEFAULT_MAX_BYTES = 4 * GIB
DEFAULT_MAX_RATIO = 1000
RATIO_FLOOR = 256 << 20          # the ratio check starts once this much was decompressed
_IN_CHUNK = 1 << 16              # compressed bytes fed to zlib per call
_OUT_CHUNK = 1 << 22             # decompressed bytes taken per call
_SALVAGE_STEP = 64               # compressed bytes per step when salvaging the output before a damaged spot
MAX_GZIP_NESTING = 3
# the SMF 113 reader's records of a shape that do not follow each other at one stride (subtype 1 and 2 records, or
# CPUs of two record lengths, interleaved) gathered where they are, a block at a time, instead of from a copy of the
# shape's records (:func:`app.formats.smf113._shape_matrix`).  In a fresh process that copy is new memory, its
# every page faulted in: the 30-day z16 file's two shapes (116 MB) cost the reading thread 0.09 s more CPU that way
# (0.25 instead of 0.34 s, 6 fresh processes each); in a process whose heap holds freed pages of an earlier read
# (the window) the copy is the cheaper (0.22 instead of 0.28 s).  Set by the command line for the commands whose
# process reads each file once (app.cli: export, compare); the frames are the same either way
GATHER_IN_PLACE = False

_MAGIC = [
    (b"%PDF", "a PDF document"),
    (b"PK\x03\x04", "a ZIP archive (unzip it first)"),
    (b"\x89PNG", "a PNG image"),
    (b"\xff\xd8\xff", "a JPEG image"),
    (b"BZh", "a bzip2 archive (decompress it first)"),
    (b"\xfd7zXZ", "an xz archive (decompress it first)"),
]


def _size_env(name: str, default: int) -> int:
    text = os.environ.get(name, "").strip().upper()
    if not text:
        return default
    mult = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}.get(text[-1:], 1)
    try:
        return int(float(text.rstrip("KMGTB") or "x") * mult)
    except ValueError:
        return default


def max_bytes() -> int:
    """The cap on the (decompressed) bytes of one file: NESTSCOPE_MAX_BYTES or 4 GiB."""
    return _size_env("NESTSCOPE_MAX_BYTES", DEFAULT_MAX_BYTES)


def max_ratio() -> int:
    return _size_env("NESTSCOPE_MAX_RATIO", DEFAULT_MAX_RATIO)


def _fmt_size(n: int) -> str:
    for unit, k in (("GiB", GIB), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= k:
            return f"{n / k:.1f} {unit}"
    return f"{n} bytes"


def _unknown(file: str, size: int, framing: str, what: str, meaning: str, code: str,
             offset: int | None = 0, extra: list[Finding] | None = None) -> ReadResult:
    from app.formats.schema import ReadResult, empty_samples

    f = make_finding(file, offset, "error", code, what, meaning)
    return ReadResult(file=file, kind="unknown", framing=framing, records={}, samples=empty_samples(),
                      findings=[*(extra or []), f], size=size)


def _display(path: str | Path) -> str:
    """The path as text that can always be printed (undecodable bytes shown as escapes)."""
    try:
        raw = os.fsencode(path)       # a name from argv holds its undecodable bytes as surrogates: back to bytes
    except (TypeError, UnicodeError):
        raw = str(path).encode("utf-8", "backslashreplace")
    return raw.decode("utf-8", "backslashreplace")


def read_file(path: str | Path, progress: Progress | None = None, cancel: Cancel | None = None, *,
              digest: bool = False, counters: Collection[str] | None = None) -> ReadResult:
    """Read one SMF or MONWRITE file (see :func:`_read_file`).  ``result.file`` is the path as printable text;
    where that differs from the path (a name that is not UTF-8), ``result.meta['path']`` keeps the path itself so
    the file can still be found (provenance: size and SHA-256)."""
    result = _read_file(path, progress, cancel, digest=digest, counters=counters)
    real = os.fsdecode(path) if isinstance(path, bytes) else str(path)
    if real != result.file:
        result.meta["path"] = real
    return result


def _read_file(path: str | Path, progress: Progress | None = None, cancel: Cancel | None = None, *,
               digest: bool = False, counters: Collection[str] | None = None) -> ReadResult:
    """Read one SMF or MONWRITE file (gzip and TERSE allowed).  Never raises for bad data or bad paths.

    With ``digest=True`` the SHA-1 of the file's bytes (as stored, computed from the
    same read) is put in ``result.meta['sha1']``.  ``counters``: the counter columns
    the caller needs (None: every counter); a reader may skip decoding the others
    (the SMF 113 reader does; MONWRITE samples keep them all).
    """
    from app.formats.schema import Cancelled

    file, data, failed = open_data(path)
    if failed is not None:
        return failed
    size = len(data)
    sha1 = None
    if digest:
        from app.formats.pages import hash_into

        hash_into(h := hashlib.sha1(usedforsecurity=False), data)
        sha1 = h.hexdigest()
    try:
        result = read_bytes(data, file, progress=progress, cancel=cancel, counters=counters)
    except Cancelled:
        raise
    except MemoryError:
        result = _unknown(file, size, "none", f"ran out of memory while reading ({_fmt_size(size)})",
                          "close other programs, read fewer files at once or split this file", "out-of-memory",
                          offset=None)
    if sha1 is not None:
        result.meta["sha1"] = sha1
    return result


def open_data(path: str | Path) -> tuple[str, bytes | mmap.mmap, ReadResult | None]:
    """The one guarded opening of an input file, for every command: (printable name, bytes or a read-only map,
    None) or (name, b"", a ReadResult whose finding says why nothing was read).  The file is opened once and
    never written; what is not a regular file (a FIFO, a device such as /dev/zero, a folder) is refused
    without reading; a plain file over :func:`max_bytes` is refused before reading; a name that is not valid
    UTF-8 is opened by its bytes and named with escapes."""
    file = _display(path)
    try:
        fd = os.open(path, open_read_flags())
    except (OSError, ValueError) as exc:
        why = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        return file, b"", _unknown(file, 0, "none", f"cannot be opened ({why})", "check the path and permissions",
                                   "unreadable-file", offset=None)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            what = ("a folder" if stat.S_ISDIR(st.st_mode) else "a named pipe (FIFO)" if stat.S_ISFIFO(st.st_mode)
                    else "a device" if stat.S_ISCHR(st.st_mode) or stat.S_ISBLK(st.st_mode)
                    else "a socket" if stat.S_ISSOCK(st.st_mode) else "not a regular file")
            return file, b"", _unknown(file, 0, "none", f"is {what}, not a regular file",
                                       "only regular files are read; copy the data into a file first", "not-a-file",
                                       offset=None)
        size = st.st_size
        cap = max_bytes()
        head = read_head(fd, 2)
        if size > cap and head != b"\x1f\x8b":
            return file, b"", _unknown(file, size, "none", f"is {_fmt_size(size)}, more than the limit of "
                                       f"{_fmt_size(cap)} for one file", "nothing was read; split the file, or raise "
                                       "the limit with the environment variable NESTSCOPE_MAX_BYTES (e.g. "
                                       "NESTSCOPE_MAX_BYTES=16G)", "too-large", offset=None)
        if size == 0:
            data: bytes | mmap.mmap = b""
        else:
            try:
                data = mmap.mmap(fd, 0, access=mmap.ACCESS_READ)
            except (OSError, ValueError):
                with os.fdopen(os.dup(fd), "rb") as fh:
                    data = fh.read(cap + 1)
    except MemoryError:
        return file, b"", _unknown(file, 0, "none", "ran out of memory while opening the file",
                                   "close other programs or read a smaller file", "out-of-memory", offset=None)
    except OSError as exc:
        return file, b"", _unknown(file, 0, "none", f"cannot be read ({exc.strerror or exc})",
                                   "check the path and permissions", "unreadable-file", offset=None)
    finally:
        os.close(fd)
    return file, data, None


def read_bytes(data, file: str, progress: Progress | None = None,
               cancel: Cancel | None = None, counters: Collection[str] | None = None,
               by_column: bool = False) -> ReadResult:
    """Recognise and decode ``data`` (bytes or a read-only buffer) read from ``file`` (``counters``: as for
    :func:`read_file`; ``by_column``: an SMF file's counters in column order, :func:`app.formats.smf113.read_smf`)."""
    from app.formats.stream_dedup import StreamDedup

    size = len(data)
    suffix = ""
    pre: list[Finding] = []
    nesting = 0
    while data[:2] == b"\x1f\x8b" and nesting < MAX_GZIP_NESTING:
        nesting += 1
        dedup = StreamDedup()           # repeated records dropped while decompressing (stream_dedup.py)
        out, found, stop = gunzip(data, file if nesting == 1 else f"{file} (inner gzip)", cancel=cancel, dedup=dedup)
        pre.extend(found)
        if nesting > 1:
            pre.append(make_finding(file, None, "info", "nested-gzip", "is a gzip file inside a gzip file",
                                    "both layers were decompressed"))
        if stop or not out:
            return _unknown(file, size, "gzip", stop or "is a gzip file from which nothing could be "
                            "decompressed", "nothing could be read; download the file again" if not stop
                            else "nothing was read", "bad-gzip" if not stop else "too-large",
                            offset=None if stop else 0, extra=pre)
        data = out
        suffix = "+gzip"
    if not data:
        return _unknown(file, size, "none", "is empty (0 bytes)", "nothing to read; check the transfer",
                        "empty-file", offset=None, extra=pre)
    from app.formats import terse  # local: keep import of the package light

    tersed = None
    if terse.looks_tersed(data):
        share = terse.PROGRESS_SHARE
        out, tersed = terse.unterse(data, file, cap=max_bytes(), ratio=max_ratio(), cancel=cancel,
                                    progress=(lambda f: progress(share * f)) if progress else None)
        pre.extend(tersed.findings)
        if tersed.stop or not out:
            return _unknown(file, size, "terse", tersed.stop or f"is a tersed data set ({tersed.describe()}) "
                            "from which no record could be untersed", "nothing was read" if tersed.stop else
                            "transfer the tersed file again in binary mode", "too-large" if tersed.stop
                            else "bad-terse", offset=None, extra=pre)
        data = out
        if progress:                                   # the reader's progress fills the rest of the bar
            progress = (lambda outer: lambda f: outer(share + (1.0 - share) * f))(progress)
    short = memory_refusal(data, file, size, pre)
    if short is not None:
        return short
    for magic, what in _MAGIC:
        if data[:len(magic)] == magic:
            return _unknown(file, size, "none", f"is {what}, not SMF or MONWRITE data",
                            "nothing was read from it", "wrong-file-type", extra=pre)
    from app.formats import monwrite, smf113  # local: keep import of the package light

    if monwrite.looks_like_monwrite(data):
        result = monwrite.read_monwrite(data, file, progress=progress, cancel=cancel)
    else:
        result = smf113.read_smf(data, file, progress=progress, cancel=cancel, counters=counters,
                                   by_column=by_column)
    if tersed is not None:
        _tersed_result(result, tersed, file)
    if suffix:
        result.framing += suffix
        result.meta["decompressed_size"] = len(data)
    if suffix:
        dedup.apply(result)
    if pre:
        result.findings = [*pre, *result.findings]
    result.size = size
    return result


def _tersed_result(result: ReadResult, tersed, file: str) -> None:
    """Name the framing of a tersed file ('terse PACK + RDW') and say what it holds when it held no counters."""
    inner = result.framing if result.kind != "unknown" and result.framing not in ("unknown", "none") else ""
    result.framing = f"terse {tersed.header.mode}" + (f" + {inner.upper()}" if inner else "")
    result.meta["terse"] = {"mode": tersed.header.mode, "recfm": tersed.header.recfm,
                            "lrecl": tersed.header.dataset_lrecl, "records": tersed.records,
                            "untersed_size": tersed.size}
    if len(result.samples):
        return
    what = f"is a tersed data set ({tersed.describe()})"
    if inner:
        result.findings.append(make_finding(file, None, "info", "tersed-file", what,
                                            "it holds no SMF 113 or MONWRITE counters"))
        return
    result.findings = [f for f in result.findings if f.code != "unknown-framing"]
    result.findings.insert(0, make_finding(file, None, "error", "tersed-not-smf", f"{what} that holds no SMF "
                                           "or MONWRITE records", "nothing was read from it; `nestscope unterse "
                                           "FILE --out OUT` writes the data set to look at"))


# ----------------------------------------------------------------------------- gzip

def _salvage(saved, piece, limit: int) -> bytes:
    """Output of ``piece`` fed from the decompressor state ``saved`` until it fails (steps of 64 bytes,
    then byte by byte inside the failing step)."""
    got = bytearray()
    d = saved
    k = 0
    step = _SALVAGE_STEP
    while k < len(piece) and len(got) < limit:
        try:
            nd = d.copy()
            got += nd.decompress(piece[k:k + step], max(limit - len(got), 1))
        except zlib.error:
            if step == 1:
                break
            step = 1
            continue
        d = nd
        k += step
    return bytes(got)


def gunzip(raw, file: str, *, cap: int | None = None, ratio: int | None = None,
           cancel: Cancel | None = None, dedup: StreamDedup | None = None
           ) -> tuple[bytearray, list[Finding], str | None]:
    """Decompress a gzip file member by member, keeping everything before any damage.

    Returns (data, findings, stop): ``stop`` is a sentence when the size cap or the
    ratio check ended the decompression (then ``data`` is what came before).
    Damage in a member (bad deflate data, bad CRC or length, a cut) is a finding
    naming the compressed offset and how much decompressed data came before it;
    decompression resumes at the next gzip member header, when there is one.
    """
    if dedup is not None and not dedup.count and dedup.pos == 0:
        from app.formats import gunzip_ahead as ahead
        from app.formats.pages import threads

        if len(raw) >= ahead.PIPELINE_FROM and threads() >= 2:   # the inflate on a second thread
            got = ahead.gunzip_ahead(raw, file, dedup, cap=cap, ratio=ratio, cancel=cancel)
            if got is not None:
                return got
            dedup.__init__()           # a record was removed on the way: decompressed again the ordinary way
        else:                          # a smaller file: its clean gzip inflated here, without a second thread
            got = _gunzip_clean(raw, dedup, cap, ratio, cancel)
            if got is not None:
                return got
            dedup.__init__()
    out = bytearray()
    found: list[Finding] = []
    stop: list[str] = []
    for piece in gunzip_pieces(raw, file, found, stop, cap=cap, ratio=ratio, cancel=cancel, kept=lambda: len(out)):
        out += piece
        if dedup is not None:
            dedup.step(out)
    if dedup is not None and not stop:
        dedup.step(out, final=True)
    return out, found, (stop[0] if stop else None)


def _gunzip_clean(raw, dedup: StreamDedup, cap: int | None, ratio: int | None, cancel: Cancel | None):
    """:func:`gunzip` of a clean gzip file below the size the inflate runs ahead from, on this thread: the
    clean-only inflate (:func:`app.formats.clean_inflate.clean_pieces`, zlib-ng when it imports: the window's
    start inflates the demo's MONWRITE file in 0.08 s instead of 0.16 s with stdlib zlib 64 KiB at a time).  None
    when the file is not clean gzip or the filter removed a record before the last piece (``dedup`` then holds
    a partial state): the caller decompresses it the ordinary way, from its start (same rule as
    :func:`app.formats.gunzip_ahead.gunzip_ahead`)."""
    from app.formats.clean_inflate import UNCLEAN, clean_pieces
    from app.formats.gunzip_ahead import _END, _consume

    pieces = clean_pieces(raw, max_bytes() if cap is None else cap, max_ratio() if ratio is None else ratio,
                          cancel=cancel)
    got = _consume(lambda: next(pieces, _END), pieces.close, [], [], dedup)
    return None if got is UNCLEAN else got


def gunzip_pieces(raw, file: str, found: list[Finding], stop: list[str], *, cap: int | None = None,
                  ratio: int | None = None, cancel: Cancel | None = None, kept: Callable[[], int] | None = None
                  ) -> Iterator[bytes]:
    """:func:`gunzip` as a stream: yields the decompressed data a piece at a time (each piece final: damage
    inside a piece gives what could be salvaged of it), appends the findings to ``found`` and the sentence of a
    size-cap or ratio stop to ``stop``.  ``kept()``: the decompressed bytes the caller holds (the cap and the
    ratio check count those; default: every byte given so far)."""
    from app.formats.pages import drop as drop_pages

    cap = max_bytes() if cap is None else cap
    ratio = max_ratio() if ratio is None else ratio
    given = [0]
    if kept is None:
        kept = lambda: given[0]        # noqa: E731
    n = len(raw)
    pos = 0
    member = 0
    mv = memoryview(raw)
    while pos < n:
        if raw[pos:pos + 2] != b"\x1f\x8b":
            import numpy as np

            if not np.frombuffer(raw, np.uint8, offset=pos).any():
                break                                   # zero padding after the last member
            nxt = _find_member(raw, pos + 1)
            found.append(make_finding(file, pos, "warning", "gzip-trailing-garbage",
                                      f"{(nxt if nxt is not None else n) - pos} bytes after gzip member {member} "
                                      "are not a gzip member", "they were ignored"
                                      + (f"; decompression resumed at offset {nxt}" if nxt is not None else "")))
            if nxt is None:
                break
            pos = nxt
        member += 1
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        start_out = kept()
        p = pos
        damaged = False
        while True:
            if cancel is not None and cancel():
                from app.formats.schema import Cancelled

                raise Cancelled()
            if d.eof:
                break
            piece = bytes(mv[p:p + _IN_CHUNK])
            if not piece:
                break
            saved = d.copy()
            before = kept()
            got = bytearray()
            try:
                chunk = d.decompress(piece, _OUT_CHUNK)
                while True:
                    got += chunk
                    why = _over_n(before + len(got), p + len(piece) - len(d.unconsumed_tail), cap, ratio)
                    if why:
                        del got[max(0, cap - before):]
                        stop.append(why)
                        given[0] += len(got)
                        yield bytes(got)
                        return
                    if not d.unconsumed_tail:
                        break
                    chunk = d.decompress(d.unconsumed_tail, _OUT_CHUNK)
                chunk = None            # (up to 4 MiB not held while the generator waits at its yield)
            except zlib.error as exc:
                tail = _salvage(saved, piece, cap - before + 1)     # what earlier pieces gave is kept
                given[0] += len(tail)
                yield tail
                damaged = True
                why = str(exc).replace("Error -3 while decompressing data: ", "")
                nxt = _find_member(raw, p + 1)
                crc = "check" in why or "length" in why
                now = before + len(tail)
                found.append(make_finding(
                    file, p, "warning" if crc else "error", "gzip-checksum" if crc else "gzip-damaged",
                    (f"gzip member {member} fails its check ({why})" if crc else
                     f"gzip member {member} is damaged in the compressed bytes from offset {p} to {p + len(piece)} "
                     f"({why})"),
                    ("all of its data was decompressed, but it may hold damaged bytes" if crc else
                     f"{now - start_out:,} bytes of it were recovered (decompressed data up to offset "
                     f"{now}); the rest of this member is lost"
                     + (f"; decompression resumed at the next gzip member at offset {nxt}" if nxt is not None
                        else ""))))
                pos = nxt if nxt is not None else n
                break
            drop_pages(raw, p, p + len(piece))          # a mapped file's compressed pages, once read
            p += len(piece) - len(d.unused_data)
            given[0] += len(got)
            yield bytes(got)
            del got
            if d.eof:
                break
        if damaged:
            continue
        if not d.eof:
            now = kept()
            found.append(make_finding(file, n, "warning", "gzip-cut",
                                      f"the gzip file is cut: member {member} ends at the end of the file "
                                      f"(size {n}) before its end marker",
                                      f"{now - start_out:,} bytes were decompressed from it (up to "
                                      f"decompressed offset {now}); whatever followed is lost"))
            break
        pos = p


MEMORY_PER_BYTE = 5          # peak memory of a read, per byte of (decompressed) data: measured 4.7 on 1 GB
MEMORY_CHECK_FROM = 256 << 20


def _available_memory() -> int | None:
    """MemAvailable of /proc/meminfo (Linux); None elsewhere."""
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None


def _memory_short(n: int) -> str | None:
    """A sentence when reading ``n`` bytes of data would need more memory than is available."""
    if n < MEMORY_CHECK_FROM or os.environ.get("NESTSCOPE_MEMORY_CHECK", "1") == "0":
        return None
    avail = _available_memory()
    need = MEMORY_PER_BYTE * n
    if avail is None or need <= avail:
        return None
    return (f"holds {_fmt_size(n)} of data, which needs about {_fmt_size(need)} of memory to read; only "
            f"{_fmt_size(avail)} is available")


def memory_refusal(data, file: str, size: int, pre: list[Finding] | None = None) -> ReadResult | None:
    """The result of a read refused before it starts because decoding ``data`` would need more memory than is
    available (:func:`_memory_short`), or None: it may go on."""
    short = _memory_short(len(data))
    if not short:
        return None
    return _unknown(file, size, "none", short, "nothing was read; close other programs, split the file, or "
                    "set NESTSCOPE_MEMORY_CHECK=0 to try anyway", "too-large", offset=None, extra=pre)


def _over_n(size: int, consumed: int, cap: int, ratio: int) -> str | None:
    """Why decompression stops at ``size`` bytes of output from ``consumed`` compressed bytes (None: it goes on)."""
    if size > cap:
        return (f"decompresses to more than the limit of {_fmt_size(cap)} for one file; raise it with the "
                "environment variable NESTSCOPE_MAX_BYTES (e.g. NESTSCOPE_MAX_BYTES=16G)")
    if ratio and size > RATIO_FLOOR and size > ratio * max(consumed, 1):
        return (f"expanded more than {ratio} times ({_fmt_size(consumed)} of gzip gave over "
                f"{_fmt_size(size)}): a decompression bomb or a file of nothing but repeats; if it is real "
                "data, set NESTSCOPE_MAX_RATIO=0")
    return None


def _find_member(raw, start: int) -> int | None:
    """Next offset >= start where a gzip member header (1F 8B 08, sane flags) starts."""
    while True:
        q = raw.find(b"\x1f\x8b\x08", start)
        if q < 0:
            return None
        if q + 10 <= len(raw) and not raw[q + 3] & 0xE0:
            return q
        start = q + 1


def check_cancel(cancel: Cancel | None) -> None:
    """Raise Cancelled when the caller asked to stop."""
    if cancel is not None and cancel():
        from app.formats.schema import Cancelled

        raise Cancelled()
