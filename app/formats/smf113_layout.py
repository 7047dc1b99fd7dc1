"""SMF 113 byte layout: offsets, value tables and the per-shape structure parser.

Offsets follow spec ``smf113.md`` sections 3-8.  Fields tagged (I) there are
UNCONFIRMED; every one is bounds-checked before use (spec section 10).

Confirmation search (2024, this implementation): IBM SMF Explorer field pages
(https://ibm.github.io/IBM-SMF-Explorer/mappings/smf113/SMF113S2/fields/cdof,
.../fields/cdln, .../fields/cdon, .../SMF113S1/fields/csflags) confirm the
*names and meanings* of CSLN/CSON/CDOF/CDLN/CDON/CSFlags (CSUseLCDS = bit 0)
but give no offsets.  patrykblicharski/HLASM-Mainframe-SMF-to-JSON-Engine
src/MAP113S2.asm gives CPSP = 4 bytes, MachType = 4 chars, CpuId = 2 bytes
only symbolically (``SMF113_2_CPSP-SMF113_2_CTS``), no numbers.  No copy of
IBM's HISYSMFR mapping macro was found.  All offsets marked (I) below remain
UNCONFIRMED; the section-10 self-check in ``smf113.py`` validates them per file.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field

from app.formats.schema import SMF_SET_TYPES, set_size

# ---- standard header and self-defining section (record offsets) -- spec 3, 4
OFF_LEN, OFF_SEG, OFF_FLG, OFF_RTY, OFF_TME, OFF_DTE = 0, 2, 4, 5, 6, 10   # C
OFF_SID, OFF_WID, OFF_STY, OFF_SDL = 14, 18, 22, 26                        # C
OFF_SDS = 28            # SOF at 28: I (strong; SDS right after SDL)
FLG_SUBTYPES = 0x40     # C

# ---- subtype 2 data section (relative to SMF113DOF) -- spec 6.1
S2_CTS, S2_CTM, S2_CPUN, S2_CLASS, S2_CF = 0, 8, 16, 17, 18      # C
S2_CFVN, S2_CSVN, S2_CSOF = 20, 22, 24                           # C
S2_CSLN, S2_CSON, S2_CDOF, S2_CDLN, S2_CDON = 28, 30, 32, 36, 38  # I (UNCONFIRMED, see module doc)
S2_CPSP, S2_MTYPE, S2_MODEL, S2_CPUID, S2_SEQ = 40, 44, 48, 64, 66  # I (UNCONFIRMED)
S2_END = 82                                                      # I
CF_FIRST, CF_INTERVAL, CF_FINAL, CF_NONSTD, CF_LOST, CF_ZCBP = 0x8000, 0x4000, 0x2000, 0x1000, 0x0800, 0x0400

# ---- subtype 1 data section (relative to SMF113DOF) -- spec 7.1
S1_CTS, S1_CTM, S1_CPUID, S1_CLASS, S1_SPEED = 0, 8, 16, 18, 20  # C
S1_MTYPE, S1_MODEL, S1_V0, S1_CFVN, S1_CSVN, S1_FLAGS = 24, 28, 44, 46, 48, 50  # C
S1_CSOF, S1_CSLN, S1_CSON, S1_SEQ, S1_CORE = 52, 56, 58, 60, 76  # I (UNCONFIRMED, see module doc)
S1_END = 78                                                      # I
S1_SET_LEN = 12          # 2-2-4-2-2 entry: CSType CSFlags CDOF CDLN CDON -- I
F1_LOST, F1_MTLOST_KC, F1_MTLOST_X, F1_ZCBP = 0x8000, 0x4000, 0x2000, 0x1000
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
    if stype == ZOS_SET:
        return                                   # IBM diagnostic set: no public numbering, kept out
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
    if csln < 2 or not _check_range(sh, "counter-set section", csof, csln * cson, low, ln):
        if csln < 2:
            sh.problem("error", "bad-section", f"counter-set entry length {csln} is too short", "skipped", True)
        return
    if cdln not in (4, 8):
        sh.problem("error", "bad-cdln", f"counter entry length (CDLN) is {cdln}, expected 8 (or 4)",
                   "the record's counters were skipped", True)
        return
    if not _check_range(sh, "counter data", cdof, cdln * cdon, low, ln):
        return
    slot, total = 0, 0
    for i in range(cson):
        e = csof + i * csln
        cst, csn = (r[e], r[e + 1]) if csln < 4 else (_u16(r, e), _u16(r, e + 2))
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
        cst, flg, cdof, cdln, cdon = _u16(r, e), _u16(r, e + 2), _u32(r, e + 4), _u16(r, e + 8), _u16(r, e + 10)
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


def self_check(r: bytes) -> tuple[bool, str]:
    """Spec 10 item 6 on one record: do the inferred (I) offsets hold together?"""
    try:
        return _self_check(r)
    except (struct.error, IndexError):
        return False, "the record is too short for the self-check"


def _self_check(r: bytes) -> tuple[bool, str]:
    sty, dof, dln, ln = _u16(r, OFF_STY), _u32(r, 44), _u16(r, 48), len(r)
    checks: list[tuple[str, bool]] = []
    if sty == 2 and dln >= S2_CDON + 2:
        csof, csln, cson = _u32(r, dof + S2_CSOF), _u16(r, dof + S2_CSLN), _u16(r, dof + S2_CSON)
        cdof = _u32(r, dof + S2_CDOF)
        checks.append((f"CSOF {csof} >= DOF+DLN {dof + dln}", csof >= dof + dln))
        checks.append((f"CDOF {cdof} == CSOF+CSLN*CSON {csof + csln * cson}", cdof == csof + csln * cson))
        if dln >= S2_CPSP + 4:
            cpsp = _u32(r, dof + S2_CPSP)
            checks.append((f"CPSP {cpsp} in 1000..10000", 1000 <= cpsp <= 10000))
        if dln >= S2_MTYPE + 4:
            mt = r[dof + S2_MTYPE:dof + S2_MTYPE + 4]
            checks.append((f"MachType {mt.hex().upper()} is 4 EBCDIC digits", all(0xF0 <= x <= 0xF9 for x in mt)))
        eq = (3, 4)
    elif sty == 1 and dln >= S1_CSON + 2:
        csof, csln, cson = _u32(r, dof + S1_CSOF), _u16(r, dof + S1_CSLN), _u16(r, dof + S1_CSON)
        checks.append((f"CSOF {csof} == DOF+DLN {dof + dln}", csof == dof + dln))
        ends, ok = [], csln >= 12 and csof + csln * cson <= ln
        for i in range(cson if ok else 0):
            e = csof + i * csln
            ends.append((_u32(r, e + 4), _u32(r, e + 4) + _u16(r, e + 8) * _u16(r, e + 10)))
        ok = ok and all(a[1] <= b[0] for a, b in zip(ends, ends[1:]))
        checks.append(("set CDOFs strictly increasing and non-overlapping", ok))
        if dln >= S1_CORE + 2:
            core, cpu = _u16(r, dof + S1_CORE), _u16(r, dof + S1_CPUID)
            checks.append((f"CoreId {core} <= CpuId {cpu}", core <= cpu))
        eq = (12,)
    else:
        return False, f"subtype {sty}: data section too short (DLN {dln}) for the self-check"
    good = all(ok for _, ok in checks)
    text = ", ".join(f"{name} {'ok' if ok else 'FAILED'}" for name, ok in checks)
    if not good:
        text += "; " + _scan_triplet(r, dof, dln, eq)
    return good, text


def _scan_triplet(r: bytes, dof: int, dln: int, entry_lens: tuple[int, ...]) -> str:
    """Search the data section for a CSOF/CSLN/CSON triplet that satisfies the section-10 equations."""
    found = []
    for rel in range(16, min(dln, len(r) - dof) - 7, 2):
        off, sl, num = _u32(r, dof + rel), _u16(r, dof + rel + 4), _u16(r, dof + rel + 6)
        if num and sl in entry_lens and off >= dof + dln and off + sl * num <= len(r):
            found.append(f"+{rel}")
    return ("a counter-set triplet fits at data-section offset " + " or ".join(found)) if found else \
        "no offset in the data section holds a consistent counter-set triplet"
