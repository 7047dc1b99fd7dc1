"""Hand-written SMF byte builders for the tests: one field per line, each commented.

Independent of ``app.formats.smf113_writer`` on purpose: the tests compare the
writer's output with these builders and with the hex dumps of spec smf113.md 11.
"""

from __future__ import annotations

import struct

# ---- spec 11.1 and 11.2 hex dumps, pasted verbatim (offset columns removed)
HEX_ST2 = """
00F40000 DE710041 EB000124 075FE2E8
E2C1C8C9 E2400002 00000018 00000034
00140001 00000000 00000000 00000048
00540001 0000F0F1 C8C9E240 40404040
E2D7F74B F34BF140 DECBEADB CA000000
DECC2080 B3000000 01004000 00030007
0000009C 000C0002 000000B4 00080008
00001450 F3F9F3F1 C1F0F140 40404040
40404040 40404040 00010000 F0F0F0F0
F0F0F0F0 F0F0F0F1 F2F3F4F5 01000006
FC000000 00000000 02000002 C0000000
00000000 00000002 540BE400 00000001
2A05F200 00000000 05F5E100 00000000
B2D05E00 00000000 02FAF080 00000000
77359400 00000000 3B9ACA00 00000000
1DCD6500
"""

HEX_ST1 = """
00E60000 DE710041 EB000124 075FE2E8
E2C1C8C9 E2400001 00000018 00000034
00140001 00000000 00000000 00000048
004E0001 0000F0F1 C8C9E240 40404040
E2D7F74B F34BF140 DECBEADB CA000000
DECC2080 B3000000 00010000 00001450
F3F9F3F1 C1F0F140 40404040 40404040
40404040 00000003 00070000 00000096
000C0002 F0F0F0F0 F0F0F0F0 F0F0F0F1
F2F3F4F5 00000001 80000000 00AE0008
00060002 00000000 00DE0004 00020000
0002540B E4000000 00012A05 F2000000
000005F5 E1000000 0000B2D0 5E000000
000002FA F0800000 00007735 9400000F
42400007 A120
"""


def unhex(text: str) -> bytes:
    return bytes.fromhex("".join(text.split()))


ST2_BYTES = unhex(HEX_ST2)      # 244 bytes
ST1_BYTES = unhex(HEX_ST1)      # 230 bytes

CTS = 0xDECBEADBCA000000        # 2024-03-15 08:00:00 TOD
CTM = 0xDECC2080B3000000        # 2024-03-15 12:00:00 TOD
BASIC = [10_000_000_000, 5_000_000_000, 100_000_000, 3_000_000_000, 50_000_000, 2_000_000_000]
PROBLEM8 = [1_000_000_000, 500_000_000]     # subtype 2 P32, P33 (8-byte)
PROBLEM4 = [1_000_000, 500_000]             # subtype 1 P32, P33 (4-byte SCDS)
E = "cp037"


def header(length: int, subtype: int) -> bytes:
    """Standard header + SDS + subsystem section of the spec 11 records (72 bytes)."""
    b = b""
    b += struct.pack(">H", length)          # 0  SMF113LEN incl. RDW
    b += struct.pack(">H", 0)               # 2  SMF113SEG not spanned
    b += bytes([0xDE])                      # 4  SMF113FLG: subsys id follows, subtypes used, version bits
    b += bytes([113])                       # 5  SMF113RTY X'71'
    b += struct.pack(">I", 4_320_000)       # 6  SMF113TME 12:00:00.00 in 1/100 s
    b += bytes.fromhex("0124075F")          # 10 SMF113DTE 0cyydddF: 2024 day 075
    b += "SYSA".encode(E)                   # 14 SMF113SID
    b += "HIS ".encode(E)                   # 18 SMF113WID
    b += struct.pack(">H", subtype)         # 22 SMF113STY
    b += struct.pack(">H", 0)               # 24 reserved
    b += struct.pack(">H", 24)              # 26 SMF113SDL: three triplets
    b += struct.pack(">IHH", 52, 20, 1)     # 28 SOF/SLN/SON subsystem section at 52, 20 bytes, 1
    b += struct.pack(">IHH", 0, 0, 0)       # 36 IOF/ILN/ION no identification section
    b += struct.pack(">I", 72)              # 44 SMF113DOF data section at 72
    b += struct.pack(">H", 84 if subtype == 2 else 78)  # 48 SMF113DLN
    b += struct.pack(">H", 1)               # 50 SMF113DON
    b += struct.pack(">H", 0)               # 52 subsystem +0: reserved (C-fix)
    b += "01".encode(E)                     # 54 SMF113RVN (+2)
    b += "HIS".encode(E).ljust(8, b"\x40")  # 56 SMF113PNM (+4)
    b += "SP7.3.1".encode(E).ljust(8, b"\x40")  # 64 SMF113OSL (+12)
    return b


def build_st2() -> bytes:
    """Spec 11.1 field by field."""
    b = header(244, 2)
    b += struct.pack(">Q", CTS)             # +0  CTS run start
    b += struct.pack(">Q", CTM)             # +8  CTM record time
    b += bytes([1])                         # +16 CPU#
    b += bytes([0])                         # +17 CpuProcClass 0 = CP
    b += struct.pack(">H", 0x4000)          # +18 CF intermediate record
    b += struct.pack(">H", 3)               # +20 CTRVN1 CFVN
    b += struct.pack(">H", 7)               # +22 CTRVN2 CSVN
    b += struct.pack(">I", 156)             # +24 CSOF counter-set section at 156
    b += struct.pack(">H", 12)              # +28 CSLN 12-byte entries
    b += struct.pack(">H", 2)               # +30 CSON 2 sets
    b += struct.pack(">I", 180)             # +32 CDOF counters at 180
    b += struct.pack(">H", 8)               # +36 CDLN 8 bytes
    b += struct.pack(">H", 8)               # +38 CDON 6 basic + 2 problem-state
    b += struct.pack(">I", 5200)            # +40 CPSP cycles/us
    b += "3931".encode(E)                   # +44 MachType
    b += "A01".encode(E).ljust(16, b"\x40")  # +48 MachModel
    b += struct.pack(">H", 1)               # +64 CpuId
    b += struct.pack(">H", 0)               # +66 reserved (C-fix)
    b += "0000000000012345".encode(E)       # +68 MachSeqCode (C-fix)
    b += bytes([1, 0]) + struct.pack(">H", 6) + bytes.fromhex("FC00000000000000")  # 156 CST basic, -, CSN 6, CSP
    b += bytes([2, 0]) + struct.pack(">H", 2) + bytes.fromhex("C000000000000000")  # 168 CST problem, -, CSN 2, CSP
    b += struct.pack(">6Q", *BASIC)         # 180 B0..B5
    b += struct.pack(">2Q", *PROBLEM8)      # 228 P32, P33
    return b


def build_st1() -> bytes:
    """Spec 11.2 field by field."""
    b = header(230, 1)
    b += struct.pack(">Q", CTS)             # +0  CTS
    b += struct.pack(">Q", CTM)             # +8  CTM
    b += struct.pack(">H", 1)               # +16 CpuId
    b += bytes([0])                         # +18 CpuProcClass CP
    b += bytes([0])                         # +19 reserved
    b += struct.pack(">I", 5200)            # +20 CpuSpeed
    b += "3931".encode(E)                   # +24 MachType
    b += "A01".encode(E).ljust(16, b"\x40")  # +28 MachModel
    b += struct.pack(">H", 0)               # +44 CtrVersion0
    b += struct.pack(">H", 3)               # +46 CtrVersion1 CFVN
    b += struct.pack(">H", 7)               # +48 CtrVersion2 CSVN
    b += struct.pack(">H", 0)               # +50 Flags
    b += struct.pack(">I", 150)             # +52 CSOF sets at 150
    b += struct.pack(">H", 12)              # +56 CSLN
    b += struct.pack(">H", 2)               # +58 CSON
    b += "0000000000012345".encode(E)       # +60 MachSeqCode
    b += struct.pack(">H", 0)               # +76 CoreId
    b += struct.pack(">HHIHH", 1, 0x8000, 174, 8, 6)  # 150 set: basic, LCDS, CDOF 174, 8-byte, 6
    b += struct.pack(">HHIHH", 2, 0, 222, 4, 2)       # 162 set: problem-state, SCDS, CDOF 222, 4-byte, 2
    b += struct.pack(">6Q", *BASIC)         # 174 B0..B5
    b += struct.pack(">2I", *PROBLEM4)      # 222 P32, P33
    return b


def other(rtype: int, length: int, fill: int = 0x5A) -> bytes:
    """A non-113 record with a valid header (e.g. type 30, 70)."""
    b = struct.pack(">HH", length, 0)       # RDW
    b += bytes([0x5E, rtype])               # FLG, RTY
    b += struct.pack(">I", 4_320_000)       # TME
    b += bytes.fromhex("0124075F")          # DTE
    b += "SYSA".encode(E)                   # SID
    return b + bytes([fill]) * (length - len(b))  # body


def bdw(*items: bytes) -> bytes:
    """One block: BDW + the given descriptors/records."""
    body = b"".join(items)
    return struct.pack(">HH", 4 + len(body), 0) + body


def sdw(code: int, data: bytes) -> bytes:
    """A segment: SDW (length, control code in byte 2 low bits) + data."""
    return struct.pack(">HBB", 4 + len(data), code, 0) + data


def vbs_example() -> bytes:
    """Spec 11.3 variant c: the subtype-2 record split 100 + 140 bytes over two blocks."""
    r = ST2_BYTES
    return bdw(sdw(0x01, r[4:104])) + bdw(sdw(0x02, r[104:244]))
