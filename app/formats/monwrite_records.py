"""Byte layouts of the z/VM monitor records NestScope reads and writes.

One table of offsets shared by the reader (:mod:`app.formats.monwrite`) and the
writer (:mod:`app.formats.monwrite_writer`), so both always agree.  Each
constant says where it comes from:

* ``CONFIRMED <url>``: offset seen in the public IBM layout page.
* ``UNCONFIRMED (monwrite.md §x)``: best inference from the research spec
  (/work/shared/spec/monwrite.md); the reader validates these at read time
  (spec §7.4) and reports failures as findings.

Search done for this module (2024 corpus of vm.ibm.com pages): only the
prologs and the first header fields of MRPRCMFC, MRPRCMFM, MRSYTPRP, MRSYTCUP,
MRMTRSYS and MRMTRPRP were readable; no field table past the header was found.
"""

from __future__ import annotations

import struct
from typing import Any

import numpy as np
import pandas as pd

from app.formats.common import ebcdic, tod_to_datetime64
from app.formats.schema import (BASE_OF_BIT, IDENTITY_COLUMNS, SET_BASIC, SET_CRYPTO, SET_EXTENDED,
                                SET_MT, SET_PROBLEM, counter_name, empty_samples, set_size)

PAGE = 4096

# ---------------------------------------------------------------- MRRECHDR
# CONFIRMED https://www.vm.ibm.com/pubs/mon730/MRMTRFCC.HTML (header block:
# MRHDRLEN 0/2, MRHDRZER 2/2, MRHDRDM 4/1, '*' 5/1, MRHDRRC 6/2, MRHDRTOD 8/8, '*' 16/4)
HDR = struct.Struct(">HHBBHQ4x")          # len, zeros, domain, flags, record, tod
HDR_NOTOD = struct.Struct(">HHBBH")       # hot-loop variant without the TOD
HDR_LEN = 20
# P (continuation) bit: byte 5 X'80'.  UNCONFIRMED (monwrite.md §2): the
# byte exists and is unnamed (CONFIRMED, page above); its bit is inferred.
P_BIT = 0x80
MAX_DOMAIN = 11

# ---------------------------------------------------------------- MWTBK
# CONFIRMED per monwrite.md §1.4-1.5 ([S1] http://www.vm.ibm.com/pubs/cp640/MWTBK.HTML: MWTEXTBF
# 0/40, MWTCAREA 40/4056 of 12-byte entries; [S2] Linux iucv.c for the IPARML fields); not re-read here.
IPARML = struct.Struct(">HBBIIII20x")     # pathid, flags1, type, msgid, trgcls, mca start, mca end
CA_ENTRY = struct.Struct(">BBBBII")       # flag, domains, domains2, reserved, start, end
CA_OFF = 40
CA_MAX = (PAGE - CA_OFF) // 12            # 338 entries
IPTYPE_OK = (0x08, 0x09)
IPFLAGS1_RMDATA = 0x80
ENTRY_SAMPLE = 0xE2
ENTRY_EVENT = 0xC5
# MWTCADMA bits (CONFIRMED, MWTBK page): domain n -> X'80' >> n for n < 8;
# second byte for 8-11 UNCONFIRMED (monwrite.md §1.4).
RDW_4100 = b"\x10\x04\x00\x00"


def domain_bits(domains: set[int]) -> tuple[int, int]:
    """Domain numbers -> (MWTCADMA, second domain byte)."""
    b1 = b2 = 0
    for d in domains:
        if d < 8:
            b1 |= 0x80 >> d
        else:
            b2 |= 0x80 >> (d - 8)
    return b1, b2


# ---------------------------------------------------------------- D5R13 / D5R20
# All body offsets UNCONFIRMED (monwrite.md §3.1, modelled on CCFBK).  D5R20 uses
# the same body shape (UNCONFIRMED, monwrite.md §3.2: PRCMFM_CAL_MFMMASK,
# PRCMFM_MTCSOFF, PRCMFM_MTCSLEN exist; offsets not seen).
MFC = struct.Struct(">H2xIH2xHHHH")       # +20 cpu, +24 speed, +28 mask, +32 cfvn, +34 csvn, +36 ctr off, +38 ctr len
MFC_FIXED = 40                            # PRCMFC_COUNTERS start
CCFDATA_BYTES = 2304                      # 288-counter image form (CCFBK X'900') UNCONFIRMED §3.1
CSET_ORDER = (SET_BASIC, SET_PROBLEM, SET_CRYPTO, SET_EXTENDED)   # concatenation order UNCONFIRMED §3.1


def counter_numbers(mask: int, cfvn: int, csvn: int) -> list[int]:
    """Counter numbers, in buffer order, of the non-MT sets active in ``mask``."""
    out: list[int] = []
    for bit in CSET_ORDER:
        if mask & bit:
            base = BASE_OF_BIT[bit]
            out.extend(range(base, base + set_size(bit, cfvn, csvn)))
    return out


def mt_numbers(cfvn: int, csvn: int, nbytes: int | None = None) -> list[int]:
    """Counter numbers of an MT-diagnostic buffer (M448...)."""
    n = set_size(SET_MT, cfvn, csvn) if nbytes is None else nbytes // 8
    return list(range(448, 448 + n))


# ---------------------------------------------------------------- D1R4 MTRSYS
# +20 MTRSYS_HCPCPEPP CONFIRMED per monwrite.md §3.3 [S18] (http://www.vm.ibm.com/pubs/mon420/MRMTRSYS.HTML);
# the rest UNCONFIRMED (monwrite.md §3.3, zpmd 5.3 reconstruction).
SYS_SYSTMID = (88, 8)
SYS_MTYPE = (108, 4)
SYS_MODEL = (112, 16)
SYS_SEQC = (128, 16)
SYS_LPNUM = 148                           # 2 bytes
SYS_LPARNAME = (160, 8)
# +80 MTRSYS_SYSZONE, signed fullword, time-zone offset (monwrite.md 3.3: offset from the zpmd 5.3 reconstruction,
# unit UNCONFIRMED).  Read as seconds east of UTC, as CP's time-zone definitions (HCPTZDBK TZDZONE "+/- seconds
# adjustment") hold them; a value that is no whole quarter hour within 14 hours is not used (zone_offset_ok).
SYS_ZONE = 80
ZONE_MAX_S = 14 * 3600
SYS_LEN = 420                             # z/VM 6.1 length, CONFIRMED (monwrite.md §3.7 [S18])

# ---------------------------------------------------------------- D1R5 MTRPRP
# +20 MTRPRP_PFXCPUAD CONFIRMED https://www.vm.ibm.com/pubs/mon440/MRMTRPRP.HTML ;
# +40 PFXCPUTY UNCONFIRMED (monwrite.md §3.4); +44 core id / +46 thread id
# UNCONFIRMED (NestScope choice for the 6.3+ MT extension, monwrite.md §3.4 ">40").
PRP_CPU = 20
PRP_CPUTY = 40
PRP_CORE = 44
PRP_THREAD = 46
PRP_LEN = 48
# CPU type codes.  X'00' CP and X'02' zAAP CONFIRMED for the same CP encoding
# in SYTSPT_CALTYPE https://www.vm.ibm.com/pubs/mon640/MRSYTSPT.HTML ; 3/4/5
# UNCONFIRMED (monwrite.md §3.4).
CPU_TYPES = {0: "CP", 2: "zAAP", 3: "IFL", 4: "ICF", 5: "zIIP"}
TYPE_CODES = {v: k for k, v in CPU_TYPES.items()}
TYPE_NAMES = {"CP": "CP", "GCP": "CP", "IFL": "IFL", "ZIIP": "zIIP", "ZAAP": "zAAP", "ICF": "ICF"}

# ---------------------------------------------------------------- D0R2 SYTPRP
# +20 PFXCPUAD, +24 PFXPRBTM, +32 PFXUTIME CONFIRMED https://www.vm.ibm.com/pubs/mon640/MRSYTPRP.HTML
# (record length 352 in 6.4, CONFIRMED same page).  +104 PFXCPUTY UNCONFIRMED (§3.5).
PRP2_CPU = 20
PRP2_CPUTY = 104
PRP2_LEN = 352
# MT block: ALL UNCONFIRMED (monwrite.md §3.5/§4: names of the two TD fields
# confirmed, offsets and scaling not).  4-byte unsigned, value / MT_SCALE,
# X'FFFFFFFF' = not available.  (column name, offset)
MT_FIELDS = (
    ("thread_density", 304),              # SYTPRP_CAL_AVGTDBYCORE
    ("thread_density_type", 308),         # SYTPRP_CAL_AVGTDBYTYPE
    ("core_busy_pct", 312),
    ("productivity", 316),
    ("mt_util_pct", 320),
    ("capacity_factor", 324),
    ("max_capacity_factor", 328),
)
MT_CORE = 332                             # 2-byte core id, X'FFFF' = unknown
MT_SCALE = 10000
MT_NA = 0xFFFFFFFF

# ---------------------------------------------------------------- D0R15 SYTCUG
# +20 SYTCUG_LCUTNPAR and length 56 CONFIRMED per monwrite.md §3.6 [S24]
# (https://www.vm.ibm.com/pubs/mon430/MRSYTCUG.HTML); +40 own LPAR name UNCONFIRMED (§3.6).
CUG_NPAR = 20
CUG_LPARNAME = (40, 8)
CUG_LEN = 56

# ---------------------------------------------------------------- D0R16 SYTCUP
# Fixed part 64 bytes CONFIRMED http://www.vm.ibm.com/pubs/mon610/MRSYTCUP.HTML ;
# SYTCUP_CALCPUOF / CALCPULN exist (CONFIRMED, same page); offsets UNCONFIRMED (§3.6).
CUP = struct.Struct(">8sBBB1xHHQ")        # +20 name, +28 pnum, +29 flags, +30 ncpu, +32 cpuof, +34 cpuln, +36 tod
CUP_FIXED = 64
CUPCPU = struct.Struct(">HHB1xQQ16s2x")   # cpu, weight, flags, actm, lptm, type name
CUPCPU_LEN = 40
CUP_CAPPED = 0x40                         # DIAG 204 cflag analogue, UNCONFIRMED (§3.6)
CUP_DEDICATED = 0x80                      # UNCONFIRMED


def decode_d1r4(rec: bytes) -> dict:
    """D1R4 body -> system identity (fields beyond MRHDRLEN are left out)."""
    n = len(rec)

    def txt(f: tuple[int, int]) -> str | None:
        o, ln = f
        return ebcdic(rec[o:o + ln]) if o + ln <= n else None

    out = {"system": txt(SYS_SYSTMID), "machine_type": txt(SYS_MTYPE), "model": txt(SYS_MODEL),
           "seqcode": txt(SYS_SEQC), "lpar": txt(SYS_LPARNAME)}
    out["lpar_number"] = int.from_bytes(rec[SYS_LPNUM:SYS_LPNUM + 2], "big") if SYS_LPNUM + 2 <= n else None
    out["zone_offset_s"] = int.from_bytes(rec[SYS_ZONE:SYS_ZONE + 4], "big", signed=True) if SYS_ZONE + 4 <= n \
        else None
    return out


def zone_offset_ok(seconds: int | None) -> bool:
    """A D1R4 time-zone offset usable as a UTC offset: whole quarter hours, at most 14 hours either way."""
    return seconds is not None and seconds % 900 == 0 and abs(seconds) <= ZONE_MAX_S


def decode_d1r5(rec: bytes) -> tuple[int, int | None, int | None]:
    """D1R5 -> (cpu address, type code or None, core id or None)."""
    n = len(rec)
    cpu = int.from_bytes(rec[PRP_CPU:PRP_CPU + 2], "big")
    typ = rec[PRP_CPUTY] if PRP_CPUTY < n else None
    core = int.from_bytes(rec[PRP_CORE:PRP_CORE + 2], "big") if PRP_CORE + 2 <= n else None
    if core == 0xFFFF:
        core = None
    return cpu, typ, core


_D0R2_FULL = struct.Struct(f">H{PRP2_CPUTY - PRP2_CPU - 2}xB{MT_FIELDS[0][1] - PRP2_CPUTY - 1}x7IH")
assert [o for _n, o in MT_FIELDS] == list(range(304, 332, 4)) and MT_CORE == 332   # contiguous 7I then H
_MT_NAMES = tuple(name for name, _o in MT_FIELDS)


def decode_d0r2_at(data: bytes, fo: int, ln: int) -> dict:
    """:func:`decode_d0r2` of ``data[fo:fo + ln]`` without copying the record (reader hot path)."""
    if ln >= MT_CORE + 2:
        cpu, typ, *vals, c = _D0R2_FULL.unpack_from(data, fo + PRP2_CPU)
        core = None if c == 0xFFFF else c
    else:                                   # short record: whatever fields fit
        rec = data[fo:fo + ln]
        cpu = int.from_bytes(rec[PRP2_CPU:PRP2_CPU + 2], "big")
        typ = rec[PRP2_CPUTY] if PRP2_CPUTY < ln else None
        core = None
        vals = [int.from_bytes(rec[o:o + 4], "big") if o + 4 <= ln else MT_NA for _n, o in MT_FIELDS]
    out: dict = {"cpu": cpu, "type": typ, "core": core}
    for name, v in zip(_MT_NAMES, vals):
        out[name] = None if v == MT_NA else v / MT_SCALE
    return out


def decode_d0r2(rec: bytes) -> dict:
    """D0R2 -> cpu, type code, core and the MT fields (None when absent)."""
    return decode_d0r2_at(rec, 0, len(rec))


_TYPE_TEXT: dict[bytes, str] = {}


def decode_d0r16(rec: bytes) -> tuple[dict, list[tuple], str | None]:
    """D0R16 -> (partition fields, [(cpu, weight, flags, actm, lptm, type)], problem)."""
    n = len(rec)
    if n < CUP_FIXED:
        return {}, [], f"D0R16 length {n} < fixed part {CUP_FIXED}"
    name, pnum, flags, ncpu, cpuof, cpuln, tod = CUP.unpack_from(rec, 20)
    part = {"lpar": ebcdic(name), "lpar_number": pnum, "flags": flags, "ncpu": ncpu, "tod": tod}
    cpus: list[tuple] = []
    if ncpu == 0:
        return part, cpus, None
    if cpuln < 38 or cpuof < CUP_FIXED:
        return part, cpus, f"D0R16 CALCPUOF {cpuof} / CALCPULN {cpuln} implausible"
    avail = (n - cpuof) // cpuln if n > cpuof else 0
    problem = None
    if avail < ncpu:
        problem = f"D0R16 announces {ncpu} CPU entries but only {avail} fit in {n} bytes"
    k = min(ncpu, avail)
    ents = (CUPCPU.iter_unpack(rec[cpuof:cpuof + k * cpuln]) if cpuln == CUPCPU.size
            else (CUPCPU.unpack_from(rec, cpuof + i * cpuln) for i in range(k)))
    for cpu, w, f, actm, lptm, typ in ents:
        name = _TYPE_TEXT.get(typ)
        if name is None:
            name = _TYPE_TEXT[typ] = ebcdic(typ).upper()
        cpus.append((cpu, w, f, actm, lptm, name))
    return part, cpus, problem


def type_class(name_or_code: str | int | None) -> str:
    """D1R5/D0R2 code or D0R16 type name -> class label ('unknown' if not known)."""
    if name_or_code is None:
        return "unknown"
    if isinstance(name_or_code, int):
        return CPU_TYPES.get(name_or_code, "unknown")
    return TYPE_NAMES.get(name_or_code.strip().upper(), name_or_code.strip() or "unknown")


# ================================================================ frames
MT_COLUMNS = ["time", "system", "cpu", "core", "class", "core_busy_pct", "thread_density", "productivity",
              "mt_util_pct", "capacity_factor", "max_capacity_factor", "thread_density_type", "lpar", "cec"]
PARTITION_COLUMNS = ["cec", "lpar", "lpar_number", "class", "cpus", "weight", "capped", "busy_pct", "time",
                     "overhead_pct"]


def _cpu_maps(w: Any) -> tuple[dict[int, int], dict[int, int]]:
    """cpu -> core and cpu -> type code, D1R5 preferred over D0R2."""
    core_of: dict[int, int] = {}
    type_of: dict[int, int] = {}
    for cpu, d in w.prp.items():
        if d["core"] is not None:
            core_of[cpu] = d["core"]
        if d["type"] is not None:
            type_of[cpu] = d["type"]
    for cpu, (typ, core) in w.cpu_cfg.items():
        if core is not None:
            core_of[cpu] = core
        if typ is not None:
            type_of[cpu] = typ
    return core_of, type_of


def build_samples(w: Any, ident: dict, file: str) -> pd.DataFrame:
    """Completed D5R13/D5R20 series of a walk -> the counter-sample frame (vectorized gather)."""
    core_of, type_of = _cpu_maps(w)
    first_of_core: dict[int, int] = {}
    for cpu, core in core_of.items():
        first_of_core[core] = min(cpu, first_of_core.get(core, cpu))
    cols: dict[str, list] = {k: [] for k in ("off", "cpu", "speed", "cfvn", "csvn", "sets", "tod", "flg")}
    groups: dict[tuple, list] = {}         # key -> [numbers, positions|None, bufs, rows]
    index: dict[tuple[int, int], int] = {}
    dropped, dropped_len = 0, False
    said = getattr(w, "said", set())        # what a file says once (a walk read in chunks keeps it across them)

    a_off, a_cpu, a_speed, a_cfvn, a_csvn, a_sets, a_tod, a_flg = (
        cols[k].append for k in ("off", "cpu", "speed", "cfvn", "csvn", "sets", "tod", "flg"))
    offs = cols["off"]
    layouts: dict[tuple[int, int, int], tuple[list[int], int]] = {}

    def new_row(meta: tuple, sets: int) -> int:
        a_off(meta[0])
        a_cpu(meta[1])
        a_speed(meta[2])
        a_cfvn(meta[4])
        a_csvn(meta[5])
        a_sets(sets)
        a_tod(meta[6])
        a_flg(meta[7])
        return len(offs) - 1

    for mt_pass in (False, True):
        for mt, interval, meta, buf in w.series:
            if mt != mt_pass:
                continue
            fo, cpu, _speed, mask, cfvn, csvn, _tod, _flg = meta
            if not mt:
                lay = layouts.get((mask, cfvn, csvn))
                if lay is None:
                    lay = layouts[(mask, cfvn, csvn)] = (
                        counter_numbers(mask, cfvn, csvn),
                        sum(b for b in CSET_ORDER if mask & b and set_size(b, cfvn, csvn)))
                nums = lay[0]
                if len(buf) == 8 * len(nums):
                    key, pos = ("c", mask, cfvn, csvn), None
                elif len(buf) == CCFDATA_BYTES:
                    key, pos = ("ccf", mask, cfvn, csvn), nums
                else:
                    w.find(fo, "warning", "counter-length", f"D5R13 CPU {cpu}: {len(buf)} counter bytes, "
                           f"expected {8 * len(nums)} for mask X'{mask:04X}' CFVN {cfvn} CSVN {csvn}",
                           "layout unknown; this CPU's counters for the interval are skipped", cpu=cpu)
                    continue
                if not nums:
                    continue
                r = index[(interval, cpu)] = new_row(meta, lay[1])
            else:
                nums = mt_numbers(cfvn, csvn, len(buf))
                if not nums:
                    continue
                if len(buf) != 8 * set_size(SET_MT, cfvn, csvn) and not dropped_len and "mt-length" not in said:
                    dropped_len = True
                    said.add("mt-length")
                    w.find(fo, "info", "mt-length", f"D5R20 CPU {cpu}: {len(buf) // 8} MT counters, CSVN {csvn} "
                           f"implies {set_size(SET_MT, cfvn, csvn)} (reported once per file)", "all counters present were kept",
                           cpu=cpu)
                if cpu in core_of and first_of_core[core_of[cpu]] != cpu:
                    dropped += 1
                    continue
                r = index.get((interval, cpu))
                if r is None:
                    r = new_row(meta, 0)
                cols["sets"][r] |= SET_MT
                key, pos = ("m", len(buf)), None
            g = groups.get(key)
            if g is None:
                g = groups[key] = [nums, pos, [], []]
            g[2].append(buf)
            g[3].append(r)
    if dropped and getattr(w, "streamed", False):      # said once, at the end of the file (monwrite_stream.py)
        w.mt_dropped += dropped
    elif dropped:
        w.find(None, "info", "mt-thread-dedup", f"{dropped} D5R20 records of non-thread-0 CPUs not stored",
               "MT-diagnostic counters are core-wide; each core keeps the values of its thread-0 CPU")
    n = len(cols["off"])
    if n == 0:
        return empty_samples()
    numbers = sorted({x for g in groups.values() for x in g[0]})
    col_of = {x: j for j, x in enumerate(numbers)}
    full = np.zeros((n, len(numbers)), dtype=np.uint64)
    for nums, pos, bufs, rows in groups.values():
        arr = np.frombuffer(b"".join(bufs), dtype=">u8").reshape(len(bufs), -1)
        if pos is not None:
            arr = arr[:, pos]
        full[np.asarray(rows)[:, None], np.asarray([col_of[x] for x in nums])[None, :]] = arr
    return samples_frame(w, ident, file, cols, numbers, full, core_of, type_of)


def samples_frame(w: Any, ident: dict, file: str, cols: dict, numbers: list[int], full: np.ndarray,
                  core_of: dict[int, int], type_of: dict[int, int]) -> pd.DataFrame:
    """Row columns (lists or arrays: off, cpu, speed, cfvn, csvn, sets, tod, flg) + counter block -> the
    counter-sample frame (shared by :func:`build_samples` and the reader's clean fast path)."""
    n = len(cols["off"])
    cpu = np.asarray(cols["cpu"], dtype=np.int32)
    # per distinct CPU, not per row: class and core; constants as one-category categoricals (no row lists)
    ucpu, inv = np.unique(cpu, return_inverse=True)
    cls_codes, cls_names = pd.factorize(np.array([type_class(type_of.get(int(c))) for c in ucpu], dtype=object))
    const = {k: ident[k] for k in ("cec", "machine_type", "model", "serial", "lpar", "system")}

    def one(v: Any) -> pd.Categorical:
        return pd.Categorical.from_codes(np.zeros(n, np.int8), categories=pd.Index([str(v)]).astype("str"))

    data: dict[str, Any] = {
        "source": one(file), "offset": _file_offsets(w, cols["off"]),
        **{k: one(v) for k, v in const.items()}, "os": one("z/VM"),
        "class": pd.Categorical(np.asarray(cls_names, dtype=object)[cls_codes][inv.ravel()]), "cpu": cpu,
        "core": np.array([core_of.get(int(c), -1) for c in ucpu], dtype=np.int32)[inv.ravel()],
        "run_start": np.full(n, np.datetime64("NaT"), dtype="datetime64[ns]"),
        "time": tod_to_datetime64(np.asarray(cols["tod"], dtype=np.uint64)),
        "cpu_speed": np.asarray(cols["speed"], dtype=np.int64), "cfvn": np.asarray(cols["cfvn"], dtype=np.int32),
        "csvn": np.asarray(cols["csvn"], dtype=np.int32), "flags": np.asarray(cols["flg"], dtype=np.int32),
        "lost": np.zeros(n, bool), "mt_lost": np.zeros(n, bool), "first": np.zeros(n, bool),
        "kind": one("absolute"), "sets": np.asarray(cols["sets"], dtype=np.int32)}
    ident_df = pd.DataFrame({c: pd.Series(data[c]).astype(t) for c, t in IDENTITY_COLUMNS.items()})
    ctr = pd.DataFrame(full, columns=[counter_name(x) for x in numbers], copy=False)   # the block as it is
    return pd.concat([ident_df, ctr], axis=1)


def _file_offsets(w: Any, off: Any) -> np.ndarray:
    """Stream offsets -> file offsets (RDW-wrapped files: the page table of the walk)."""
    if w.pages is None:
        return np.asarray(off, dtype=np.int64)
    o = np.asarray(off, dtype=np.int64)
    pages = np.asarray(w.pages, dtype=np.int64)
    i = o // PAGE
    inside = i < len(pages)
    out = np.full(len(o), pages[-1] + PAGE + 4 if len(pages) else 0, dtype=np.int64)
    out[inside] = pages[i[inside]] + o[inside] % PAGE
    return out


def build_mt(w: Any, ident: dict) -> pd.DataFrame:
    """D0R2 MT fields -> ``ReadResult.mt`` (one row per CPU per interval, NaN when absent)."""
    core_of, type_of = _cpu_maps(w)
    rows = w.mt_rows
    n = len(rows)
    if not n:
        df = pd.DataFrame(columns=MT_COLUMNS)
        df["time"] = tod_to_datetime64(np.asarray(df["time"].to_numpy(), dtype=np.uint64))
        return df.astype({"cpu": "int32", "core": "int32", **{c: "float64" for c in MT_COLUMNS[5:12]}})
    ds = [d for _t, d in rows]
    cpus = [d["cpu"] for d in ds]
    cls_of: dict = {}                       # class label per type code, not per row
    classes = []
    for d, cpu in zip(ds, cpus):
        typ = d["type"] if d["type"] is not None else type_of.get(cpu)
        c = cls_of.get(typ)
        if c is None:
            c = cls_of[typ] = type_class(typ)
        classes.append(c)
    # one column at a time (a frame from 92,160 row lists converted every cell on its own)
    data: dict[str, Any] = {
        "time": tod_to_datetime64(np.fromiter((t for t, _d in rows), np.uint64, n)),
        "system": [ident["system"]] * n,
        "cpu": np.asarray(cpus, dtype=np.int32),
        "core": np.asarray([d["core"] if d["core"] is not None else core_of.get(cpu, -1)
                            for d, cpu in zip(ds, cpus)], dtype=np.int32),
        "class": classes}
    for c in MT_COLUMNS[5:12]:
        data[c] = np.fromiter((np.nan if d[c] is None else d[c] for d in ds), np.float64, n)
    data["lpar"], data["cec"] = [ident["lpar"]] * n, [ident["cec"]] * n
    return pd.DataFrame(data, columns=MT_COLUMNS)


def build_partitions(w: Any, ident: dict) -> pd.DataFrame:
    """D0R16 series -> ``ReadResult.partitions`` with busy % from consecutive samples (spec §3.6)."""
    merged: dict[tuple, list] = {}
    for interval, tod, _fo, part, cpus in w.cup:
        e = merged.setdefault((interval, part["lpar"], part["lpar_number"]), [tod, part["tod"] or tod, {}])
        for c in cpus:
            e[2][c[0]] = c
    if w.npar is not None and merged:
        per_interval: dict[int, int] = {}          # partitions per interval, one pass (was quadratic)
        for k in merged:
            per_interval[k[0]] = per_interval.get(k[0], 0) + 1
        seen = max(per_interval.values())
        if seen != w.npar:
            w.find(None, "info", "partition-count", f"D0R15 reports {w.npar} partitions, D0R16 records "
                   f"describe {seen}", "Global Performance Data may be disabled on the HMC")
    ents, empty = [], []
    for (_i, lpar, pnum), (tod, htod, cpus) in merged.items():
        if not cpus:
            empty.append([ident["cec"], lpar, pnum, "", 0, 0, False, np.nan, tod, np.nan])
        for cpu, wgt, fl, actm, lptm, typ in cpus.values():
            ents.append((tod, htod, lpar, pnum, cpu, wgt, fl, actm, lptm, type_class(typ)))
    df = pd.DataFrame(ents, columns=ENTRY_COLUMNS) if ents else None
    return partitions_frame(w, ident, df, empty)


ENTRY_COLUMNS = ["tod", "htod", "lpar", "pnum", "cpu", "weight", "flags", "actm", "lptm", "class"]


def partitions_frame(w: Any, ident: dict, df: pd.DataFrame | None, empty: list) -> pd.DataFrame:
    """Per-CPU D0R16 entries (merged per interval and partition, ENTRY_COLUMNS) + rows of partitions
    without CPUs -> ``ReadResult.partitions`` (shared by :func:`build_partitions` and the reader's fast path)."""
    out = pd.DataFrame(empty, columns=PARTITION_COLUMNS)
    if df is not None:
        df = df.sort_values(["lpar", "pnum", "cpu", "htod"], kind="stable")
        g = df.groupby(["lpar", "pnum", "cpu"], sort=False)
        dt = g["htod"].diff() / 4.096e9
        dact = g["actm"].diff().where(lambda x: x >= 0)
        dlp = g["lptm"].diff().where(lambda x: x >= 0)
        rate = (dact / dt).max()
        scale = 4096.0 if rate == rate and rate > 1.05e6 else 1.0     # TOD units vs microseconds
        w.unit = "tod" if scale > 1 else "us"
        df["busy"] = dact / scale / (dt * 1e6) * 100
        df["ovh"] = dlp / scale / (dt * 1e6) * 100
        df["capped"] = (df["flags"] & CUP_CAPPED) != 0
        df["nb"] = df["busy"].isna()
        df["no"] = df["ovh"].isna()
        agg = df.groupby(["tod", "lpar", "pnum", "class"], sort=False).agg(
            cpus=("cpu", "size"), weight=("weight", "max"), capped=("capped", "any"), busy_pct=("busy", "sum"),
            overhead_pct=("ovh", "sum"), nb=("nb", "sum"), no=("no", "sum")).reset_index()
        agg["busy_pct"] = (agg["busy_pct"] / agg["cpus"]).where(agg["nb"] == 0)     # NaN unless every CPU has a delta
        agg["overhead_pct"] = (agg["overhead_pct"] / agg["cpus"]).where(agg["no"] == 0)
        agg["cec"] = ident["cec"]
        agg = agg.rename(columns={"pnum": "lpar_number", "tod": "time"})[PARTITION_COLUMNS]
        out = pd.concat([out, agg], ignore_index=True) if len(out) else agg
    out["time"] = tod_to_datetime64(np.asarray(out["time"].to_numpy(), dtype=np.uint64))
    out = out.astype({"lpar_number": "int32", "cpus": "int32", "weight": "int32", "capped": "bool",
                      "busy_pct": "float64", "overhead_pct": "float64"})
    return out.sort_values(["time", "lpar", "class"], kind="stable").reset_index(drop=True)
