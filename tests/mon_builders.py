"""Hand byte builders for MONWRITE tests, independent of app.formats.monwrite_writer.

Every field is written on its own line with its offset, so a test's bytes can be
checked against /work/shared/spec/monwrite.md by eye.  All integers big-endian.
"""

from __future__ import annotations

import datetime as dt

TOD_UNIX = 0x7D91048BCA000000
EBC = "cp037"


def u(n: int, v: int) -> bytes:
    return int(v).to_bytes(n, "big")


def txt(s: str, n: int) -> bytes:
    return s.encode(EBC)[:n].ljust(n, b"\x40")


def tod(t: dt.datetime) -> int:
    return TOD_UNIX + int((t - dt.datetime(1970, 1, 1)).total_seconds() * 1_000_000) * 4096


T0 = dt.datetime(2024, 3, 15, 12, 0, 0)
TOD0 = 0xDECC2080B3000000          # = tod(T0), spec §6


def control_record(entries: list[tuple[int, int, int, int, int]], *, msgid: int = 0x123,
                   mca: int = 0x0A000000) -> bytes:
    """MWTBK: entries = [(flag, dom1, dom2, start, end)]."""
    b = b""
    b += u(2, 1)                                 # +0  IPPATHID
    b += u(1, 0x80)                              # +2  IPFLAGS1 IPRMDATA
    b += u(1, 0x09)                              # +3  IPTYPE message pending
    b += u(4, msgid)                             # +4  IPMSGID
    b += u(4, 0)                                 # +8  IPTRGCLS
    b += u(4, mca)                               # +12 IPRMMSG1 MCA start
    b += u(4, mca + 12 * len(entries) - 1)       # +16 IPRMMSG2 MCA end
    b += bytes(20)                               # +20 reserved .. +39
    for flag, d1, d2, s, t in entries:
        b += u(1, flag)                          # +0 MWTCAFLG E2 sample / C5 event
        b += u(1, d1)                            # +1 MWTCADMA domains 0-7
        b += u(1, d2)                            # +2 domains 8-11
        b += u(1, 0)                             # +3 reserved
        b += u(4, s)                             # +4 MWTCASTR
        b += u(4, t)                             # +8 MWTCAEND
    return b.ljust(4096, b"\x00")


def header(length: int, dom: int, rc: int, t: int = TOD0, flags: int = 0) -> bytes:
    b = b""
    b += u(2, length)                            # +0  MRHDRLEN
    b += u(2, 0)                                 # +2  MRHDRZER
    b += u(1, dom)                               # +4  MRHDRDM
    b += u(1, flags)                             # +5  flags, X'80' = P bit
    b += u(2, rc)                                # +6  MRHDRRC
    b += u(8, t)                                 # +8  MRHDRTOD
    b += u(4, 0)                                 # +16 reserved
    return b


def d1r11(t: int = TOD0) -> bytes:
    return header(20, 1, 11, t)                  # interval end


def d1r13(t: int = TOD0) -> bytes:
    return header(20, 1, 13, t)                  # end of frame


def d5r13(cpu: int, counters: bytes, *, speed: int = 5200, mask: int = 0x0006, cfvn: int = 3, csvn: int = 7,
          p: bool = False, t: int = TOD0, rc: int = 13) -> bytes:
    body = b""
    body += u(2, cpu)                            # +20 CPU address
    body += u(2, 0)                              # +22 reserved
    body += u(4, speed)                          # +24 CPU speed
    body += u(2, mask)                           # +28 CCFCMFAC
    body += u(2, 0)                              # +30 reserved
    body += u(2, cfvn)                           # +32 CFVN
    body += u(2, csvn)                           # +34 CSVN
    body += u(2, 40)                             # +36 counter offset
    body += u(2, len(counters))                  # +38 counter length
    body += counters                             # +40 PRCMFC_COUNTERS
    return header(20 + len(body), 5, rc, t, 0x80 if p else 0) + body


def d1r4(system: str = "VMSYS1", mtype: str = "3931", model: str = "A01", seq: str = "00000000000123F5",
         lpnum: int = 3, lpar: str = "LPVM1", t: int = TOD0) -> bytes:
    b = bytearray(400)                           # body +20 .. +419
    b[88 - 20:96 - 20] = txt(system, 8)          # +88  MTRSYS_SYSTMID
    b[108 - 20:112 - 20] = txt(mtype, 4)         # +108 MTRSYS_SYSMTYPE
    b[112 - 20:128 - 20] = txt(model, 16)        # +112 MTRSYS_SYSMMODL
    b[128 - 20:144 - 20] = txt(seq, 16)          # +128 MTRSYS_SYSMSEQC
    b[148 - 20:150 - 20] = u(2, lpnum)           # +148 MTRSYS_LPNUMBER
    b[160 - 20:168 - 20] = txt(lpar, 8)          # +160 MTRSYS_LPARNAME
    return header(420, 1, 4, t) + bytes(b)


def d1r5(cpu: int, type_code: int, core: int | None = None, t: int = TOD0) -> bytes:
    b = bytearray(28)                            # body +20 .. +47
    b[0:2] = u(2, cpu)                           # +20 MTRPRP_PFXCPUAD
    b[40 - 20] = type_code                       # +40 MTRPRP_PFXCPUTY
    b[44 - 20:46 - 20] = u(2, 0xFFFF if core is None else core)   # +44 core id, FFFF = unknown
    return header(48, 1, 5, t) + bytes(b)


def d0r2(cpu: int, type_code: int, core: int, fields: dict[str, float], t: int = TOD0) -> bytes:
    offs = {"thread_density": 304, "thread_density_type": 308, "core_busy_pct": 312, "productivity": 316,
            "mt_util_pct": 320, "capacity_factor": 324, "max_capacity_factor": 328}
    b = bytearray(332)
    b[0:2] = u(2, cpu)                           # +20 SYTPRP_PFXCPUAD
    b[104 - 20] = type_code                      # +104 PFXCPUTY
    for name, o in offs.items():                 # +304.. MT fields, x10000, FFFFFFFF = n/a
        v = fields.get(name)
        b[o - 20:o - 16] = u(4, 0xFFFFFFFF if v is None else round(v * 10000))
    b[332 - 20:334 - 20] = u(2, core)            # +332 core id
    return header(352, 0, 2, t) + bytes(b)


def d0r16(name: str, pnum: int, cpus: list[tuple[int, int, int, int, int, str]], t: int = TOD0,
          ncpu: int | None = None) -> bytes:
    """cpus = [(cpu, weight, flags, dispatch time, lpar time, type name)]."""
    b = b""
    b += txt(name, 8)                            # +20 SYTCUP_LCUPNAME
    b += u(1, pnum)                              # +28 LCUPPNUM
    b += u(1, 0)                                 # +29 flags
    b += u(1, len(cpus) if ncpu is None else ncpu)   # +30 CPU entries
    b += u(1, 0)                                 # +31 reserved
    b += u(2, 64)                                # +32 CALCPUOF
    b += u(2, 40)                                # +34 CALCPULN
    b += u(8, t)                                 # +36 hypervisor TOD
    b += bytes(20)                               # +44 .. +63
    for cpu, w, fl, actm, lptm, typ in cpus:
        b += u(2, cpu)                           # +0 LCUCPUID
        b += u(2, w)                             # +2 weight
        b += u(1, fl)                            # +4 flags X'40' capped
        b += u(1, 0)                             # +5
        b += u(8, actm)                          # +6 dispatch time
        b += u(8, lptm)                          # +14 LPAR mgmt time
        b += txt(typ, 16)                        # +22 CPU type name
        b += u(2, 0)                             # +38
    return header(20 + len(b), 0, 16, t) + b


def page(*records: bytes) -> bytes:
    b = b"".join(records)
    assert len(b) <= 4096
    return b.ljust(4096, b"\x00")


def block(records: list[bytes], *, start: int = 0x0A123000, flag: int = 0xE2, d1: int = 0x44,
          msgid: int = 0x123) -> bytes:
    """Control record + one page holding ``records`` (must fit)."""
    n = sum(len(r) for r in records)
    return control_record([(flag, d1, 0, start, start + n - 1)], msgid=msgid) + page(*records)


SPEC_EXAMPLE_HEX = """
00000000: 00 01 80 09 00 00 01 23 00 00 00 00 0a 00 00 00
00000010: 0a 00 00 0b 00 00 00 00 00 00 00 00 00 00 00 00
00000020: 00 00 00 00 00 00 00 00 e2 44 00 00 0a 12 30 00
00000030: 0a 12 30 7b 00 00 00 00 00 00 00 00 00 00 00 00
00001000: 00 68 00 00 05 00 00 0d de cc 20 80 b3 00 00 00
00001010: 00 00 00 00 00 00 00 00 00 00 14 50 00 06 00 00
00001020: 00 03 00 07 00 28 00 40 00 00 00 48 a4 b8 00 00
00001030: 00 00 00 1f 3c 2a 10 00 00 00 00 00 0a 1b 2c 3d
00001040: 00 00 00 01 23 45 67 89 00 00 00 00 0b cd ef 01
00001050: 00 00 00 02 34 56 78 90 00 00 00 0d 4e 5f 60 00
00001060: 00 00 00 05 a0 b0 c0 00 00 14 00 00 01 00 00 0b
00001070: de cc 20 80 b3 00 00 00 00 00 00 00 00 00 00 00
"""


def spec_example() -> bytes:
    """The 8192-byte worked example of monwrite.md §6 (omitted lines are zeros)."""
    buf = bytearray(8192)
    for line in SPEC_EXAMPLE_HEX.strip().splitlines():
        addr, hexes = line.split(":")
        o = int(addr, 16)
        bs = bytes.fromhex(hexes)
        buf[o:o + len(bs)] = bs
    return bytes(buf)
