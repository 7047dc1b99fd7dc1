"""Tersed data sets (IBM AMATERSE / TRSMAIN, PACK and SPACK): recognise the header, unterse as a stream.

SMF dumps leave z/OS tersed; :func:`app.formats.read_bytes` recognises a tersed file by its 12-byte header (never
by its name), untersed it here and hands the result to the SMF or MONWRITE reader.  The output is what z/OS FTP
in binary mode with ``SITE RDW`` gives for the data set itself: fixed records back to back, variable records
each behind its RDW; so an SMF dump comes out as an RDW file.

Header (host mode, as AMATERSE writes it; all big-endian):

====== ===== ===================================================================
offset bytes
====== ===== ===================================================================
0      1     X'02' PACK, X'05' SPACK
1      1     X'00' fixed records, X'01' variable records
2      2     record length (variable: the longest record data, without the RDW)
4      1     flags (X'04' written on MVS; X'10' spanned records)
5      1     ratio (0)
6      2     block size of the data set the tersed data came from
8      4     record length when it does not fit in two bytes, else 0
====== ===== ===================================================================

The decompression loops are in :mod:`app.formats.terse_codec` (pure Python) and ``app.formats._terse``
(compiled, same bytes); this module drives them a chunk of output at a time, with the same guards as the gzip
path (size cap, expansion ratio, cancel), and turns every way a stream can stop into a finding that names the
offset in the tersed file and the number of records recovered.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from app.findings import Finding, make_finding
from app.formats import kernel
from app.formats import terse_codec as T
from app.formats.schema import Cancelled

try:
    from app.formats import _terse as _ct
except ImportError:        # not built: the pure-Python loops give the same bytes
    _ct = None

__all__ = ["TerseHeader", "Untersed", "parse_header", "looks_tersed", "unterse", "compiled"]

HEADER_SIZE = 12
MAX_LRECL = 32760
BLOCK = 1024                      # a tersed data set is written in records of 1,024 bytes
FLAG_MVS, FLAG_SPANNED = 0x04, 0x10
OUT_CHUNK = 1 << 22               # output bytes per call of the loop
RATIO_FLOOR = 256 << 20           # as for gzip: the ratio check starts once this much was untersed
PROGRESS_SHARE = 0.3              # of a read's progress bar: the unterse (then the reader fills the rest)
_CARRY = 65536 + 8                # the longest record kept back between chunks (an RDW holds 65,535)


@dataclass(frozen=True)
class TerseHeader:
    """What the 12-byte header says."""

    mode: str                     # 'PACK' or 'SPACK'
    variable: bool
    spanned: bool
    lrecl: int                    # fixed: record length; variable: the longest record data (LRECL - 4)
    blksize: int

    @property
    def recfm(self) -> str:
        return "VBS" if self.variable and self.spanned else "VB" if self.variable else "FB"

    @property
    def dataset_lrecl(self) -> int:
        """LRECL as z/OS shows it (a variable record's length counts its RDW)."""
        return self.lrecl + 4 if self.variable else self.lrecl


@dataclass
class Untersed:
    """How an unterse went: ``records`` and ``size`` (bytes) written, findings, ``stop`` when a guard ended it."""

    header: TerseHeader
    records: int = 0
    size: int = 0
    consumed: int = 0
    findings: list[Finding] = field(default_factory=list)
    stop: str | None = None

    def describe(self) -> str:
        h = self.header
        return (f"AMATERSE {h.mode}, RECFM={h.recfm}, LRECL={h.dataset_lrecl}, {self.records:,} records, "
                f"{self.size:,} bytes untersed")


def compiled() -> bool:
    """True when the compiled loop serves (built, and the kernel not switched off)."""
    return _ct is not None and kernel.available()


def _be(b, p: int, w: int) -> int:
    return int.from_bytes(bytes(b[p:p + w]), "big")


def parse_header(data) -> TerseHeader | None:
    """The header of a tersed data set at the start of ``data``, or None when ``data`` does not start with one."""
    if len(data) < HEADER_SIZE:
        return None
    version, recfm, flags, ratio = data[0], data[1], data[4], data[5]
    r1, blk, r2 = _be(data, 2, 2), _be(data, 6, 2), _be(data, 8, 4)
    if version not in (0x02, 0x05) or recfm not in (0, 1):
        return None
    if (r1 == 0 and r2 == 0) or (r1 and r2 and r1 != r2):
        return None
    lrecl = r1 or r2
    if lrecl > MAX_LRECL or (not flags & FLAG_MVS and (flags or ratio or blk)):
        return None
    return TerseHeader("SPACK" if version == 0x05 else "PACK", recfm == 1, bool(flags & FLAG_SPANNED), lrecl, blk)


def looks_tersed(data) -> bool:
    """True when ``data`` starts with a TERSE header and not with a chain of RDW records that could mimic one.

    An RDW of length 512, 513, 1280 or 1281 starts like a header; it passes the header's checks only when its
    bytes 8 to 11 happen to hold a small number, and then the next RDW decides.
    """
    if parse_header(data) is None:
        return False
    if data[2] or data[3]:
        return True
    ln = _be(data, 0, 2)
    nxt = bytes(data[ln:ln + 4])
    return not (len(nxt) == 4 and nxt[2:] == b"\0\0" and _be(nxt, 0, 2) >= 18)


def unterse(raw, file: str, *, write: Callable[[memoryview], object] | None = None, cap: int | None = None,
            ratio: int = 0, cancel: Callable[[], bool] | None = None, floor: int = RATIO_FLOOR,
            chunk: int = OUT_CHUNK, progress: Callable[[float], None] | None = None) -> tuple[bytearray, Untersed]:
    """Unterse ``raw`` (a tersed data set, bytes or a buffer; never modified).

    The output goes to ``write`` a chunk at a time (whole records only) when given, else into the returned
    bytearray.  ``cap``: most output bytes (None: no limit); ``ratio``: stop when the output grows past this
    many times the tersed bytes read, once past ``floor`` bytes (0: no check).  Damage keeps every record
    before it and is a finding; so are a cut and bytes after the end marker.  ``cancel`` is polled between
    chunks (:class:`Cancelled`); ``progress`` is called with the fraction of the tersed bytes read after each.
    """
    hdr = parse_header(raw)
    if hdr is None:
        raise ValueError("not a tersed data set")
    st = T.new_state(T.SPACK if hdr.mode == "SPACK" else T.PACK, hdr.variable,
                     max(hdr.lrecl, 65531) if hdr.spanned else hdr.lrecl, HEADER_SIZE)
    run = _ct.step if compiled() else T.step
    info = Untersed(hdr)
    out = bytearray()
    buf = bytearray(min(chunk, max(1 << 16, 16 * len(raw))) + _CARRY + T.PACK_ROOM)
    olen = 0
    n = len(raw)
    while True:
        if cancel is not None and cancel():
            raise Cancelled()
        before = (olen, int(st[T.CODE]))
        olen = run(st, raw, buf, olen)
        if (olen, int(st[T.CODE])) == before and st[T.STATUS] == T.RUN:    # never expected (the buffer always
            st[T.STATUS] = T.BAD_CODE                                      # has room for a code): stop, not hang
        status = int(st[T.STATUS])
        if status == T.END and hdr.variable and st[T.RECSTART] >= 0:     # a last record without its mark
            rs = int(st[T.RECSTART])
            buf[rs:rs + 2] = (olen - rs).to_bytes(2, "big")
            st[T.RECSTART], st[T.RECORDS] = -1, st[T.RECORDS] + 1
        if status == T.END:
            keep = olen
        elif hdr.variable:
            keep = olen if st[T.RECSTART] < 0 else int(st[T.RECSTART])
        else:
            keep = olen - (info.size + olen) % hdr.lrecl
        if cap is not None and info.size + keep > cap:
            keep = cap - info.size
            info.stop = (f"untersed to more than the limit of {_size(cap)} for one file; raise it with the "
                         "environment variable NESTSCOPE_MAX_BYTES (e.g. NESTSCOPE_MAX_BYTES=16G)")
        if keep:
            if write is None:
                out += memoryview(buf)[:keep]
            else:
                write(memoryview(buf)[:keep])
        info.size += keep
        info.consumed = min(n, HEADER_SIZE + (3 * int(st[T.CODE]) + 1) // 2)
        info.records = int(st[T.RECORDS]) if hdr.variable else -(-info.size // hdr.lrecl)
        if not info.stop and ratio and info.size > floor and info.size > ratio * max(info.consumed, 1):
            info.stop = (f"expanded more than {ratio} times ({_size(info.consumed)} of tersed data gave over "
                         f"{_size(info.size)}): a decompression bomb or a file of nothing but repeats; if it is "
                         "real data, set NESTSCOPE_MAX_RATIO=0")
        if progress is not None:
            progress(min(info.consumed / max(n, 1), 1.0))
        if info.stop or status != T.RUN:
            break
        buf[:olen - keep] = buf[keep:olen]
        olen -= keep
        if hdr.variable and st[T.RECSTART] >= 0:
            st[T.RECSTART] -= keep
    if not info.stop:
        _end_findings(info, raw, file, status, int(st[T.CURCODE]))
    return out, info


def _end_findings(info: Untersed, raw, file: str, status: int, k: int) -> None:
    """The finding for how the stream ended (nothing for a clean end marker followed by zero padding)."""
    n = len(raw)
    at = HEADER_SIZE + (3 * k) // 2            # the byte where the code in progress starts
    kept = (f"{info.records:,} records ({info.size:,} bytes) before it were kept, up to output record "
            f"{info.records:,}")
    if status == T.END:
        pad = -(-info.consumed // BLOCK) * BLOCK   # AMATERSE leaves old buffer bytes in the rest of the last block
        tail = bytes(raw[pad:])
        if tail.strip(b"\0"):
            first = pad + len(tail) - len(tail.lstrip(b"\0"))
            info.findings.append(make_finding(
                file, first, "warning", "terse-trailing-data",
                f"the tersed data ends with its end marker at offset {at}, but {n - pad:,} bytes follow its last "
                f"1,024-byte record that are not zero padding (the first at offset {first})",
                f"they were not read; {kept}; if the file was damaged there, what followed is lost"))
        elif n < pad:
            # AMATERSE writes 1,024-byte records: a shorter last block means the file was cut there, and the
            # end marker read at its very end is likely a damaged byte, not the real end
            info.findings.append(make_finding(
                file, n, "warning", "terse-short-block",
                f"the tersed file ends at offset {n}, inside its last 1,024-byte record (tersed data sets are "
                f"written in whole 1,024-byte records): it was probably cut, and the end marker at offset {at} "
                "may be damage",
                f"{kept}; the last record may be incomplete; transfer the tersed file again in binary mode"))
        return
    if status == T.CUT:
        info.findings.append(make_finding(
            file, n, "warning", "terse-cut",
            f"the tersed data is cut: it ends at offset {n} (the file size) before its end marker",
            f"{kept}; whatever followed is lost; transfer the tersed file again in binary mode"))
        return
    why = {T.BAD_CODE: "a code names no entry of the dictionary built so far",
           T.BAD_CHAIN: "a dictionary chain loops back on itself",
           T.LONG_RECORD: f"a record grows past the longest the header allows ({info.header.lrecl:,} bytes)"}
    info.findings.append(make_finding(
        file, at, "error", "terse-damaged", f"the tersed data is damaged at offset {at}: {why.get(status, status)}",
        f"{kept}; the rest of the file could not be untersed; transfer the tersed file again in binary mode"))


def _size(n: int) -> str:
    for unit, k in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= k:
            return f"{n / k:.1f} {unit}"
    return f"{n} bytes"
