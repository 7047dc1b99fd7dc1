"""SMF 113 byte layout: offsets, value tables and the per-shape structure parser.

Offsets follow spec ``smf113.md`` sections 3-8 as corrected on 2026-11-23 from
IBM's own SMF 113 formatter (HIS113 REXX exec, IBM/IBM-Z-zOS
SMF-Tools/SMF113Formatter) and IBM's HIS education deck: every field offset
used here is confirmed (tag C or C-fix in the spec).  There is one layout,
IBM's.  Sections are located through their self-describing offsets and
lengths (SOF/IOF/DOF, CSOF/CSLN/CSON, CDOF/CDLN/CDON), and fixed fields are
read only when they end inside their section (DLN, CSLN, ILN), so a later z/OS
level that appends fields to a section still reads.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from app.formats.schema import SMF_SET_TYPES, set_size

# ---- standard header and self-defining section (record offsets) -- spec 3, 4
OFF_LEN, OFF_SEG, OFF_FLG, OFF_RTY, OFF_TME, OFF_DTE = 0, 2, 4, 5, 6, 10
OFF_SID, OFF_WID, OFF_STY, OFF_SDL = 14, 18, 22, 26
OFF_SDS = 28            # SOF/SLN/SON at 28, IOF/ILN/ION at 36, DOF/DLN/DON at 44
OFF_SOF, OFF_IOF, OFF_DOF = 28, 36, 44
FLG_SUBTYPES = 0x40

# ---- subsystem section (relative to SOF) -- spec 5: 2 reserved bytes first (C-fix)
SUB_RVN, SUB_PNM, SUB_OSL, SUB_LEN = 2, 4, 12, 20
# ---- identification section (relative to IOF) -- spec 5
ID_JBN, ID_RST, ID_RSD, ID_STP, ID_START, ID_END, ID_LEN = 0, 8, 12, 16, 24, 32, 40

# ---- subtype 2 data section (relative to SMF113DOF) -- spec 6.1
S2_CTS, S2_CTM, S2_CPUN, S2_CLASS, S2_CF = 0, 8, 16, 17, 18
S2_CFVN, S2_CSVN, S2_CSOF, S2_CSLN, S2_CSON = 20, 22, 24, 28, 30
S2_CDOF, S2_CDLN, S2_CDON = 32, 36, 38
S2_CPSP, S2_MTYPE, S2_MODEL, S2_CPUID = 40, 44, 48, 64
S2_SEQ = 68              # after 2 reserved bytes at +66 (C-fix)
S2_END = 84              # today's data section length (C-fix)
# subtype 2 counter-set entry (relative to the entry) -- spec 6.3: CST byte, reserved, CSN, CSP bitmap
S2_CST, S2_CSN, S2_CSP, S2_SET_LEN = 0, 2, 4, 12
CF_FIRST, CF_INTERVAL, CF_FINAL, CF_NONSTD, CF_LOST, CF_ZCBP = 0x8000, 0x4000, 0x2000, 0x1000, 0x0800, 0x0400

# ---- subtype 1 data section (relative to SMF113DOF) -- spec 7.1
S1_CTS, S1_CTM, S1_CPUID, S1_CLASS, S1_SPEED = 0, 8, 16, 18, 20
S1_MTYPE, S1_MODEL, S1_V0, S1_CFVN, S1_CSVN, S1_FLAGS = 24, 28, 44, 46, 48, 50
S1_CSOF, S1_CSLN, S1_CSON, S1_SEQ, S1_CORE = 52, 56, 58, 60, 76
S1_END = 78
# subtype 1 counter-set entry (relative to the entry) -- spec 7.3: 2-2-4-2-2
S1_CSTYPE, S1_CSFLAGS, S1_CDOF, S1_CDLN, S1_CDON, S1_SET_LEN = 0, 2, 4, 8, 10, 12
# subtype 1 flags -- spec 7.2: bit 0 lost data, bit 1 lost MT data, bits 2/3 zCBP (IBM formatter / SMF Explorer)
F1_LOST, F1_MTLOST, F1_ZCBP, F1_ZCBP_X = 0x8000, 0x4000, 0x2000, 0x1000
CS_LCDS = 0x8000

# ---- value tables -- spec 8
CLASS_NAMES = {0: "GCP", 2: "zAAP", 4: "zIIP"}
# machine type -> (generation, CFVN, CSVN) -- spec 8.3
MACHINES: dict[str, tuple[str, int, int]] = {
    "2097": ("z10", 1, 1), "2098": ("z10", 1, 1), "2817": ("z196", 1, 2), "2818": ("z114", 1, 2),
    "2827": ("zEC12", 1, 3), "2828": ("zBC12", 1, 3), "2964": ("z13", 1, 4), "2965": ("z13s", 1, 4),
    "3906": ("z14", 3, 5), "3907": ("z14 ZR1", 3, 5), "8561": ("z15", 3, 6), "8562": ("z15", 3, 6),
    "3931": ("z16", 3, 7), "3932": ("z16", 3, 7), "9175": ("z17", 3, 8), "9176": ("z17", 3, 8),
}
ZOS_SET = 5
ZAAP_GENERATIONS = {"z10", "z196", "z114", "zEC12", "zBC12", "z13", "z13s"}   # class 2 may be a zAAP

_H = struct.Struct(">H")
_I = struct.Struct(">I")


def class_name(code: int, zcbp: bool) -> str:
    """Processor class code (spec 8.1) -> 'GCP' 'zAAP' 'zCBP' 'zIIP' or 'unknown(n)'."""
    if code == 2 and zcbp:
        return "zCBP"
    return CLASS_NAMES.get(code, f"unknown({code})")


@dataclass
class SetLayout:
    """One counter set of a record shape: where its counters are and what they are."""

    stype: int
    offset: int          # record offset of counter 0
    width: int           # 4 or 8
    count: int
    bit: int = 0
    base: int = 0


@dataclass
class Shape:
    """Structure shared by every record of one layout (decoded once per shape)."""

    sty: int
    dof: int
    dln: int
    sets: list[SetLayout] = field(default_factory=list)
    ident: int | None = None     # record offset of the identification section, when it holds the interval times
    problems: list[tuple[str, str, str, str]] = field(default_factory=list)  # severity, code, what, meaning
    fatal: bool = False

    def problem(self, sev: str, code: str, what: str, meaning: str, fatal: bool = False) -> None:
        self.problems.append((sev, code, what, meaning))
        self.fatal = self.fatal or fatal


def _u16(r: bytes, o: int) -> int:
    return _H.unpack_from(r, o)[0]


def _u32(r: bytes, o: int) -> int:
    return _I.unpack_from(r, o)[0]


def parse_shape(r: bytes) -> Shape:
    """Parse and check (spec 10 items 2-5) the structure of record ``r`` (RDW included)."""
    try:
        return _parse_shape(r)
    except (struct.error, IndexError):
        sh = Shape(0, 0, 0)
        sh.problem("error", "bad-section", "a section of the record lies outside the record",
                   "the record was skipped", True)
        return sh


def _parse_shape(r: bytes) -> Shape:
    ln, sty, sdl = len(r), _u16(r, OFF_STY), _u16(r, OFF_SDL)
    dof, dln, don = _u32(r, 44), _u16(r, 48), _u16(r, 50)
    sh = Shape(sty, dof, dln)
    low = OFF_SDS + sdl
    for name, t in (("subsystem", 28), ("identification", 36), ("data", 44)):
        off, sl, num = _u32(r, t), _u16(r, t + 4), _u16(r, t + 6)
        if num and (off < low or off + sl * num > ln):
            sh.problem("error", "bad-section", f"{name} section offset {off} length {sl} x {num} lies outside "
                       f"the record (header ends at {low}, record length {ln})", "the record was skipped", True)
    if sh.fatal:
        return sh
    iof, iln, ion = _u32(r, OFF_IOF), _u16(r, OFF_IOF + 4), _u16(r, OFF_IOF + 6)
    if ion and iln >= ID_END + 8:
        sh.ident = iof
    need = S2_CDON + 2 if sty == 2 else S1_CSON + 2
    if not don or dln < need:
        sh.problem("error", "short-data-section", f"data section length {dln} (number {don}) is shorter than the "
                   f"{need} bytes that locate the counters", "the record was skipped", True)
        return sh
    cfvn, csvn = (_u16(r, dof + S2_CFVN), _u16(r, dof + S2_CSVN)) if sty == 2 else \
        (_u16(r, dof + S1_CFVN), _u16(r, dof + S1_CSVN))
    if sty == 2:
        _sets_st2(r, sh, cfvn, csvn, low)
    else:
        _sets_st1(r, sh, cfvn, csvn, low)
    return sh


def _check_range(sh: Shape, what: str, off: int, size: int, low: int, ln: int) -> bool:
    if off < low or off + size > ln:
        sh.problem("error", "bad-section", f"{what} at offset {off} length {size} lies outside the record "
                   f"(header ends at {low}, record length {ln})", "the record was skipped", True)
        return False
    return True


def _add_set(sh: Shape, stype: int, off: int, width: int, count: int, cfvn: int, csvn: int) -> None:
    if stype == ZOS_SET or count <= 0:            # the diagnostic set, or an entry without counters
        return                                   # (the diagnostic set has no public numbering: kept out)
    if stype not in SMF_SET_TYPES:
        sh.problem("warning", "unknown-set", f"counter set type {stype} is not documented",
                   "its counters were ignored")
        return
    bit, _letter, base = SMF_SET_TYPES[stype]
    installed = set_size(bit, cfvn, csvn)
    if installed and count > installed:
        sh.problem("warning", "cdon-too-large", f"counter set type {stype} holds {count} counters but only "
                   f"{installed} are installed for CFVN {cfvn} / CSVN {csvn}",
                   f"only the first {installed} were used")
        count = installed
    sh.sets.append(SetLayout(stype, off, width, count, bit, base))


def _sets_st2(r: bytes, sh: Shape, cfvn: int, csvn: int, low: int) -> None:
    d, ln = sh.dof, len(r)
    csof, csln, cson = _u32(r, d + S2_CSOF), _u16(r, d + S2_CSLN), _u16(r, d + S2_CSON)
    cdof, cdln, cdon = _u32(r, d + S2_CDOF), _u16(r, d + S2_CDLN), _u16(r, d + S2_CDON)
    if not cson or not cdon:
        return
    if csln < S2_CSN + 2:
        sh.problem("error", "bad-section", f"counter-set entry length (CSLN) {csln} is shorter than the 4 bytes "
                   "that hold the set type and counter count", "the record was skipped", True)
        return
    if not _check_range(sh, "counter-set section", csof, csln * cson, low, ln):
        return
    if cdln not in (4, 8):
        sh.problem("error", "bad-cdln", f"counter entry length (CDLN) is {cdln}, expected 8 (or 4)",
                   "the record's counters were skipped", True)
        return
    if not _check_range(sh, "counter data", cdof, cdln * cdon, low, ln):
        return
    entries = [(r[csof + i * csln + S2_CST], _u16(r, csof + i * csln + S2_CSN)) for i in range(cson)]
    empty = [i for i, (_t, n) in enumerate(entries) if n == 0]
    if empty and sum(n for _t, n in entries) != cdon:
        i = empty[0]              # a damaged count: which slots belong to which set cannot be told
        sh.problem("error", "bad-counter-set", f"counter-set entry {i + 1} of {cson} (set type {entries[i][0]}, "
                   f"at record offset {csof + i * csln}) says it holds 0 counters, and the entries' counts do not "
                   f"add up to CDON {cdon}", "the record was skipped (which counter belongs to which set cannot be "
                   "told); the other records of the file were read", True)
        return
    slot, total = 0, 0
    for i in range(cson):                        # entries stepped by CSLN: CST byte, reserved, CSN, CSP
        cst, csn = entries[i]
        total += csn
        if slot + csn > cdon:
            sh.problem("error", "bad-section", f"counter sets claim {total} counters but CDON is {cdon}",
                       "the sets beyond CDON were skipped")
            break
        _add_set(sh, cst, cdof + slot * cdln, cdln, csn, cfvn, csvn)
        slot += csn
    if total != cdon and total <= cdon:
        sh.problem("warning", "bad-section", f"the counter sets hold {total} counters in all but CDON is {cdon}",
                   "the counters were read set after set from the first slot")


def _sets_st1(r: bytes, sh: Shape, cfvn: int, csvn: int, low: int) -> None:
    d, ln = sh.dof, len(r)
    csof, csln, cson = _u32(r, d + S1_CSOF), _u16(r, d + S1_CSLN), _u16(r, d + S1_CSON)
    if not cson:
        return
    if csln < S1_SET_LEN:
        sh.problem("error", "bad-section", f"counter-set entry length {csln} is shorter than 12",
                   "the record was skipped", True)
        return
    if not _check_range(sh, "counter-set section", csof, csln * cson, low, ln):
        return
    spans = []
    for i in range(cson):
        e = csof + i * csln
        cst, flg, cdof = _u16(r, e + S1_CSTYPE), _u16(r, e + S1_CSFLAGS), _u32(r, e + S1_CDOF)
        cdln, cdon = _u16(r, e + S1_CDLN), _u16(r, e + S1_CDON)
        if cdln not in (4, 8):
            sh.problem("warning", "bad-cdln", f"counter set type {cst}: counter entry length (CDLN) {cdln} is "
                       "neither 4 nor 8", "the set was skipped")
            continue
        if not cdon:
            continue
        if not _check_range(sh, f"counter data of set type {cst}", cdof, cdln * cdon, low, ln):
            return
        if bool(flg & CS_LCDS) != (cdln == 8):
            sh.problem("info", "csflags-mismatch", f"counter set type {cst}: CSUseLCDS flag disagrees with "
                       f"CDLN {cdln}", "the width was taken from CDLN")
        spans.append((cdof, cdof + cdln * cdon))
        _add_set(sh, cst, cdof, cdln, cdon, cfvn, csvn)
    spans.sort()
    if any(a[1] > b[0] for a, b in zip(spans, spans[1:])):
        sh.problem("warning", "bad-section", "counter data areas of two sets overlap", "values may be wrong")


def zcbp_rule(machine_type: str, flag_on: bool) -> bool:
    """Does processor class 2 mean zCBP?  Spec 7.2: zAAPs do not exist after z13, so on z14 and later
    class 2 is a zCBP whatever the flags say; on z13 and earlier (and unknown machines) only the flag tells."""
    gen = MACHINES.get(machine_type)
    if gen is not None and gen[0] not in ZAAP_GENERATIONS:
        return True
    return flag_on


def consistency_check(r: bytes) -> list[tuple[int, str, str]]:
    """Spec 10 item 6 on one record: the fields that do not fit, as (record offset, field, what) triples.

    An empty list means the record is consistent.  The record still decodes through its
    self-describing offsets and lengths whatever this finds.
    """
    try:
        return _consistency(r)
    except (struct.error, IndexError):
        return [(0, "SMF113LEN", f"the record ({len(r)} bytes) is too short for its own section offsets")]


def _consistency(r: bytes) -> list[tuple[int, str, str]]:
    sty, dof, dln, ln = _u16(r, OFF_STY), _u32(r, OFF_DOF), _u16(r, OFF_DOF + 4), len(r)
    bad: list[tuple[int, str, str]] = []
    if sty == 2 and dln >= S2_CDON + 2:
        csof, csln, cson = _u32(r, dof + S2_CSOF), _u16(r, dof + S2_CSLN), _u16(r, dof + S2_CSON)
        cdof, cdln, cdon = _u32(r, dof + S2_CDOF), _u16(r, dof + S2_CDLN), _u16(r, dof + S2_CDON)
        if csof < dof + dln:
            bad.append((dof + S2_CSOF, "SMF113_2_CSOF", f"{csof} lies inside the data section (DOF+DLN = {dof + dln})"))
        if cdof != csof + csln * cson:
            bad.append((dof + S2_CDOF, "SMF113_2_CDOF", f"{cdof} is not CSOF+CSLN*CSON = {csof + csln * cson}"))
        if csln < 4:
            bad.append((dof + S2_CSLN, "SMF113_2_CSLN", f"{csln} is shorter than 4 (12 today)"))
        elif csof + csln * cson <= ln:
            total = 0
            for i in range(cson):
                e = csof + i * csln
                if not 1 <= r[e + S2_CST] <= 4:
                    bad.append((e + S2_CST, "SMF113_2_CST", f"set type {r[e + S2_CST]} is not 1..4"))
                total += _u16(r, e + S2_CSN)
            if total != cdon:
                bad.append((dof + S2_CDON, "SMF113_2_CDON", f"{cdon} is not the sum of CSN {total}"))
        if cdln != 8:
            bad.append((dof + S2_CDLN, "SMF113_2_CDLN", f"{cdln} is not 8"))
        if dln >= S2_CPSP + 4 and not 1000 <= _u32(r, dof + S2_CPSP) <= 10000:
            bad.append((dof + S2_CPSP, "SMF113_2_CPSP", f"{_u32(r, dof + S2_CPSP)} cycles/us is not in 1,000..10,000"))
        if dln >= S2_MTYPE + 4 and not all(0xF0 <= x <= 0xF9 for x in r[dof + S2_MTYPE:dof + S2_MTYPE + 4]):
            bad.append((dof + S2_MTYPE, "SMF113_2_MachType",
                        f"X'{r[dof + S2_MTYPE:dof + S2_MTYPE + 4].hex().upper()}' is not 4 EBCDIC digits"))
        if dln >= S2_SEQ + 16 and not _ebcdic_text(r[dof + S2_SEQ:dof + S2_SEQ + 16]):
            bad.append((dof + S2_SEQ, "SMF113_2_MachSeqCode",
                        f"X'{r[dof + S2_SEQ:dof + S2_SEQ + 16].hex().upper()}' is not 16 EBCDIC characters"))
    elif sty == 1 and dln >= S1_CSON + 2:
        csof, csln, cson = _u32(r, dof + S1_CSOF), _u16(r, dof + S1_CSLN), _u16(r, dof + S1_CSON)
        if csof < dof + dln:
            bad.append((dof + S1_CSOF, "SMF113_1_CSOF", f"{csof} lies inside the data section (DOF+DLN = {dof + dln})"))
        if csln < S1_SET_LEN:
            bad.append((dof + S1_CSLN, "SMF113_1_CSLN", f"{csln} is shorter than 12"))
        elif csof + csln * cson <= ln:
            spans = [(_u32(r, e + S1_CDOF), _u32(r, e + S1_CDOF) + _u16(r, e + S1_CDLN) * _u16(r, e + S1_CDON), e)
                     for e in (csof + i * csln for i in range(cson))]
            for a, b in zip(spans, spans[1:]):
                if b[0] < a[1]:
                    bad.append((b[2] + S1_CDOF, "SMF113_1_CDOF", f"{b[0]} is not after the previous set's counter "
                                f"data (which ends at {a[1]})"))
    else:
        bad.append((OFF_DOF + 4, "SMF113DLN", f"subtype {sty}: data section length {dln} is too short to locate "
                    "the counter sets"))
    return bad


def _ebcdic_text(b: bytes) -> bool:
    """EBCDIC letters, digits or blanks only (what a machine sequence code holds)."""
    return all(x == 0x40 or 0xC1 <= x <= 0xC9 or 0xD1 <= x <= 0xD9 or 0xE2 <= x <= 0xE9 or 0xF0 <= x <= 0xF9
               for x in b)
