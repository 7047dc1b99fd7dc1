"""A small TERSE encoder for the tests: tersed SMF files made here, untersed by app.formats.terse.

PACK is encoded for real (greedy longest match in the decoder's own dictionary, which the encoder rebuilds step
by step exactly as the decoder will); SPACK only as literals (every code a single byte or a record mark: a valid
SPACK stream that does not compress, enough to carry SMF records through the SPACK loop).  Written from the
decoder's rules in app/formats/terse_codec.py, independent of its code.
"""

from __future__ import annotations

BLANK = 1 + 0x40
MARK = 257


def rdw_records(data: bytes) -> list[bytes]:
    """The record data of an RDW file (each RDW dropped)."""
    out, p = [], 0
    while p + 4 <= len(data):
        n = int.from_bytes(data[p:p + 2], "big")
        out.append(data[p + 4:p + n])
        p += n
    return out


def symbols(records: list[bytes], variable: bool) -> list[int]:
    """Decoder symbols: byte b is b + 1; a variable record ends with the record mark 257."""
    out: list[int] = []
    for r in records:
        out.extend(b + 1 for b in r)
        if variable:
            out.append(MARK)
    return out


def header(mode: str, variable: bool, lrecl: int, spanned: bool = False, blksize: int = 27998) -> bytes:
    """The 12-byte header: version, record format, record length, flags (MVS, spanned), ratio, block size."""
    return (bytes([0x05 if mode == "SPACK" else 0x02, int(variable)]) + lrecl.to_bytes(2, "big")
            + bytes([0x0C | (0x10 if spanned else 0), 0]) + blksize.to_bytes(2, "big") + bytes(4))


def pack_codes(codes: list[int]) -> bytes:
    """12-bit codes, two to three bytes, high nibble first; an odd last code fills two bytes."""
    out = bytearray()
    for i in range(0, len(codes) - 1, 2):
        a, b = codes[i], codes[i + 1]
        out += bytes([a >> 4, ((a & 15) << 4) | (b >> 8), b & 255])
    if len(codes) % 2:
        a = codes[-1]
        out += bytes([a >> 4, (a & 15) << 4])
    return bytes(out)


def pack_encode(syms: list[int]) -> list[int]:
    """PACK codes for ``syms``, ending with the end marker 0."""
    father = [0] * 4096
    ext = [0] * 4096
    bw = [0] * 4096
    fw = [0] * 4096
    child: dict[tuple[int, int], int] = {}
    for i in range(258, 4096):                       # nodes 258.. start as runs of 2, 3, ... blanks
        father[i] = BLANK if i == 258 else i - 1
        ext[i] = BLANK
        child[(father[i], BLANK)] = i
    for i in range(258, 4095):
        bw[i + 1], fw[i] = i, i + 1
    bw[0], fw[0], bw[258], fw[4095] = 4095, 258, 0, 0
    codes: list[int] = []
    x, i, n = 0, 0, len(syms)
    while i < n:
        y = bw[0]                                    # the node the decoder will take for the new entry
        cur, j = syms[i], i + 1
        while j < n:
            c = child.get((cur, syms[j]))
            if c is None or c == y or c == x:        # the pending node has no extension yet
                break
            cur, j = c, j + 1
        codes.append(cur)
        if child.get((father[y], ext[y])) == y:
            del child[(father[y], ext[y])]
        # the decoder's update for code `cur` (its output is syms[i:j])
        q = bw[y]
        bw[0], fw[q] = q, 0
        h, p, d = y, 0, cur
        while d > 257:
            q, r = fw[d], bw[d]
            fw[r], bw[q] = q, r
            fw[d], bw[h] = h, d
            h = d
            e = father[d]
            father[d] = p
            p, d = d, e
        q = fw[0]
        fw[y], bw[q], fw[0], bw[h] = q, y, h, 0
        ext[x] = d
        if x and (father[x], d) not in child:
            child[(father[x], d)] = x
        x = y
        while p:
            e = father[p]
            father[p] = d
            d, p = p, e
        father[y] = d
        i = j
    codes.append(0)
    return codes


def tersed(records: list[bytes], mode: str = "PACK", variable: bool = True, lrecl: int | None = None,
           spanned: bool = False) -> bytes:
    """A tersed data set of ``records`` (variable: data without RDWs), padded to 1,024-byte records."""
    if lrecl is None:
        lrecl = max(map(len, records)) if records else 1
    syms = symbols(records, variable)
    codes = pack_encode(syms) if mode == "PACK" else [*syms, 0]
    body = header(mode, variable, lrecl, spanned) + pack_codes(codes)
    return body + bytes(-len(body) % 1024)
