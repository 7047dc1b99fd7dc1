"""SMF 113 writer: the byte-exact inverse of :mod:`app.formats.smf113`.

Layouts follow IBM's SMF 113 layout as spec ``smf113.md`` 11 shows it: header
FLG X'DE', WID 'HIS ', SDL 24, subsystem section (2 reserved bytes, RVN '01',
PNM 'HIS', OSL) at 52 length 20, an optional identification section (job and
step name, interval start and end) at 72 length 40, then the data section;
subtype 2 DLN 84 with 12-byte counter-set entries (CST byte, reserved, CSN,
CSP bitmap) and CDLN 8; subtype 1 DLN 78 with 12-byte set entries.  Framings: RDW, BDW (VB), VBS (spanned), double RDW and
RDW-stripped, optionally gzip-compressed.
"""

from __future__ import annotations

import datetime as _dt
import gzip as _gzip
import struct
from collections.abc import Iterable
from pathlib import Path

import numpy as np
import pandas as pd

from app.formats import common
from app.formats.schema import (
    BASE_OF_BIT,
    LETTER_OF_BIT,
    SMF_SET_TYPES,
    is_counter_column,
    set_size,
)

__all__ = ["encode_subtype1", "encode_subtype2", "encode_samples", "other_record", "frame_rdw", "frame_bdw",
           "frame_double_rdw", "frame_nordw", "write_smf_file"]

_HDR = struct.Struct(">HHBBI4s4s4sHHH IHH IHH IHH H2s8s8s")   # 0..72: header, SDS, subsystem section
_IDS = struct.Struct(">8sI4s8sQQ")                               # identification section, 40 bytes
_ST2 = struct.Struct(">QQBBHHH IHH IHH I4s16sHH16s")            # data section, 84 bytes
_ST1 = struct.Struct(">QQHBBI4s16sHHHH IHH16sH")                # data section, 78 bytes
_SET2 = struct.Struct(">BBHQ")                                   # CST, reserved, CSN, CSP bitmap
_SET1 = struct.Struct(">HHIHH")
assert _HDR.size == 72 and _IDS.size == 40 and _ST2.size == 84 and _ST1.size == 78 and _SET2.size == 12
SUB_OFF, ID_OFF = 52, 72

CLASS_CODES = {"GCP": 0, "CP": 0, "zAAP": 2, "zCBP": 2, "zIIP": 4}
WIDE_SETS = (1, 4)        # basic and extended are always written as 8-byte LCDS


def _tod_to_local(tod: int) -> tuple[int, bytes]:
    """TOD of the local time (the record time itself when the zone is UTC) -> (SMF TME hundredths since
    midnight, packed DTE)."""
    t = _dt.datetime(1970, 1, 1) + _dt.timedelta(microseconds=(tod - common.TOD_UNIX_EPOCH) >> 12)
    tme = ((t.hour * 60 + t.minute) * 60 + t.second) * 100 + t.microsecond // 10_000
    return tme, common.encode_packed_date(t.date())


def _dof(rec: dict) -> int:
    """Record offset of the data section: after the identification section when the record has one."""
    return ID_OFF + (_IDS.size if rec.get("interval") is not None else 0)


def _header(length: int, subtype: int, rec: dict) -> bytes:
    """Standard header, self-defining section, subsystem section and (with ``rec['interval']``) the
    identification section: job 'HIS', step 'HIS', reader start = record time, interval start/end TOD."""
    tme, dte = _tod_to_local(int(rec.get("local_tod", rec["time_tod"])))
    ident = rec.get("interval")
    hdr = _HDR.pack(length, 0, 0xDE, 113, tme, dte, common.to_ebcdic(rec.get("system", "SYSA"), 4),
                    common.to_ebcdic("HIS", 4), subtype, 0, 24,
                    SUB_OFF, 20, 1,                                   # subsystem section
                    *((ID_OFF, _IDS.size, 1) if ident is not None else (0, 0, 0)),   # identification section
                    _dof(rec), 84 if subtype == 2 else 78, 1,         # data section
                    0, common.to_ebcdic("01", 2), common.to_ebcdic("HIS", 8),
                    common.to_ebcdic(rec.get("osl", "SP7.3.1"), 8))
    if ident is None:
        return hdr
    return hdr + _IDS.pack(common.to_ebcdic("HIS", 8), tme, dte, common.to_ebcdic("HIS", 8),
                           int(ident[0]), int(ident[1]))


def _sets(rec: dict) -> list[tuple[int, np.ndarray]]:
    return [(t, np.asarray(v, dtype=np.uint64)) for t, v in sorted(rec.get("counters", {}).items())]


def encode_subtype2(rec: dict) -> bytes:
    """One SMF 113 subtype 2 record (absolute counters), spec 6 / 11.1.

    Parameters
    ----------
    rec : dict
        system, cpu, cls_code, cpu_speed, machine_type, model, seqcode, cfvn,
        csvn, run_start_tod, time_tod, flags (SMF113_2_CF), counters
        {set type 1-4: uint64 array}.
    """
    sets = _sets(rec)
    csof = _dof(rec) + _ST2.size
    cdof = csof + _SET2.size * len(sets)
    cdon = sum(len(v) for _, v in sets)
    length = cdof + 8 * cdon
    cpu = int(rec.get("cpu", 0))
    data = _ST2.pack(int(rec["run_start_tod"]), int(rec["time_tod"]), cpu & 0xFF, int(rec.get("cls_code", 0)),
                     int(rec.get("flags", 0x4000)), int(rec["cfvn"]), int(rec["csvn"]),
                     csof if sets else 0, _SET2.size, len(sets), cdof if sets else 0, 8, cdon,
                     int(rec.get("cpu_speed", 0)), common.to_ebcdic(rec.get("machine_type", ""), 4),
                     common.to_ebcdic(rec.get("model", ""), 16), cpu, 0,
                     common.to_ebcdic(str(rec.get("seqcode", "")).rjust(16, "0"), 16))
    entries = b"".join(_SET2.pack(t, 0, len(v), csp_bitmap(len(v))) for t, v in sets)
    values = np.concatenate([v for _, v in sets]).astype(">u8").tobytes() if sets else b""
    return _header(length, 2, rec) + data + entries + values


def csp_bitmap(n: int) -> int:
    """SMF113_2_CSP: bits 0..n-1 on (IBM bit 0 = X'80' of the first byte); 64 bits cannot say more."""
    n = min(n, 64)
    return ((1 << n) - 1) << (64 - n) if n else 0


def encode_subtype1(rec: dict) -> bytes:
    """One SMF 113 subtype 1 record (delta counters), spec 7 / 11.2.

    Basic and extended sets are written 8-byte (LCDS, CSFlags X'8000'); other
    sets 4-byte (SCDS) when every value fits in 32 bits.  ``rec['widths']``
    ({set type: 4|8}) overrides; ``rec['core']`` is the CoreId (default 0).
    """
    sets = _sets(rec)
    widths = rec.get("widths", {})
    csof = _dof(rec) + _ST1.size
    cd = csof + _SET1.size * len(sets)
    entries, values = [], []
    for t, v in sets:
        w = widths.get(t) or (8 if t in WIDE_SETS or (len(v) and int(v.max()) > 0xFFFFFFFF) else 4)
        entries.append(_SET1.pack(t, 0x8000 if w == 8 else 0, cd, w, len(v)))
        values.append(v.astype(">u8" if w == 8 else ">u4").tobytes())
        cd += w * len(v)
    core = rec.get("core", 0)
    data = _ST1.pack(int(rec["run_start_tod"]), int(rec["time_tod"]), int(rec.get("cpu", 0)),
                     int(rec.get("cls_code", 0)), 0, int(rec.get("cpu_speed", 0)),
                     common.to_ebcdic(rec.get("machine_type", ""), 4), common.to_ebcdic(rec.get("model", ""), 16),
                     int(rec.get("ctr_version0", 0)), int(rec["cfvn"]), int(rec["csvn"]), int(rec.get("flags", 0)),
                     csof if sets else 0, 12, len(sets),
                     common.to_ebcdic(str(rec.get("seqcode", "")).rjust(16, "0"), 16),
                     0 if core is None or int(core) < 0 else int(core))
    return _header(cd, 1, rec) + data + b"".join(entries) + b"".join(values)


def _local_tod(samples: pd.DataFrame) -> np.ndarray:
    """The header local time of each row as a TOD value: column ``local_time`` (naive local time, e.g. from
    ``app.sample.model.with_local_time``), the UTC record time where it is NaT."""
    loc = samples["local_time"].to_numpy("datetime64[ns]")
    return common.datetime64_to_tod(np.where(np.isnat(loc), samples["time"].to_numpy("datetime64[ns]"), loc))


def _has_interval(samples: pd.DataFrame) -> bool:
    """Write identification sections when the frame states every row's interval (columns rec_start/rec_end)."""
    return all(c in samples.columns and samples[c].notna().all() for c in ("rec_start", "rec_end")) and len(samples) > 0


def _encode_samples_rowwise(samples: pd.DataFrame, subtype: int) -> list[bytes]:
    """Reference: the original row-by-row :func:`encode_samples` (tests only)."""
    enc = encode_subtype2 if subtype == 2 else encode_subtype1
    out: list[bytes] = []
    letters = {t: (bit, SMF_SET_TYPES[t][1], BASE_OF_BIT[bit]) for t, (bit, _l, _b) in SMF_SET_TYPES.items()}
    cols = set(samples.columns)
    ctr = {c: samples[c].to_numpy(np.uint64) for c in samples.columns if is_counter_column(c)}
    n = len(samples)
    get = {c: samples[c].to_numpy() for c in ("system", "cpu", "core", "class", "cpu_speed", "machine_type", "model",
                                              "serial", "cfvn", "csvn", "flags", "sets", "lost", "mt_lost", "first",
                                              "seqcode", "cls_code") if c in cols}
    tod = {c: common.datetime64_to_tod(samples[c].to_numpy("datetime64[ns]")) for c in ("run_start", "time")
           if c in cols}
    if _has_interval(samples):
        tod.update({c: common.datetime64_to_tod(samples[c].to_numpy("datetime64[ns]")) for c in ("rec_start", "rec_end")})
    zero = np.zeros(n, np.uint64)
    ltod = _local_tod(samples) if "local_time" in cols else None
    for i in range(n):
        cls = str(get["class"][i]) if "class" in get else "GCP"
        cfvn, csvn = int(get["cfvn"][i]), int(get["csvn"][i])
        flags = int(get["flags"][i]) if "flags" in get else (0x4000 if subtype == 2 else 0)
        if cls == "zCBP":
            flags |= 0x0400 if subtype == 2 else 0x2000
        if get.get("lost") is not None and get["lost"][i]:
            flags |= 0x0800 if subtype == 2 else 0x8000
        if subtype == 2 and get.get("first") is not None and get["first"][i]:
            flags |= 0x8000
        if subtype == 1 and get.get("mt_lost") is not None and get["mt_lost"][i]:
            flags |= 0x4000
        counters = {}
        for t, (bit, letter, base) in letters.items():
            if int(get["sets"][i]) & bit and (subtype == 1 or t <= 4):
                k = set_size(bit, cfvn, csvn)
                counters[t] = np.array([ctr.get(f"{LETTER_OF_BIT[bit]}{base + j}", zero)[i] for j in range(k)],
                                       dtype=np.uint64)
        seq = str(get["seqcode"][i]) if "seqcode" in get else str(get.get("serial", ["0"] * n)[i]).rjust(16, "0")
        rec = {"system": str(get["system"][i]), "cpu": int(get["cpu"][i]),
               "core": int(get["core"][i]) if "core" in get else 0,
               "cls_code": int(get["cls_code"][i]) if "cls_code" in get else CLASS_CODES.get(cls, 0),
               "cpu_speed": int(get["cpu_speed"][i]) if "cpu_speed" in get else 0,
               "machine_type": str(get["machine_type"][i]), "model": str(get["model"][i]) if "model" in get else "",
               "seqcode": seq, "cfvn": cfvn, "csvn": csvn, "flags": flags,
               "run_start_tod": int(tod["run_start"][i]), "time_tod": int(tod["time"][i]), "counters": counters}
        if "rec_start" in tod:
            rec["interval"] = (int(tod["rec_start"][i]), int(tod["rec_end"][i]))
        if ltod is not None:
            rec["local_tod"] = int(ltod[i])
        out.append(enc(rec))
    return out


# Offsets of the per-row fields: header fields from the record start, data-section fields from DOF (spec 6.1, 7.1).
_OFF_HDR = {"tme": 6, "dte": 10, "system": 14}
_OFF_ST2 = {"run": 0, "time": 8, "cpu8": 16, "cls": 17, "flags": 18, "speed": 40, "mt": 44, "model": 48,
            "cpu": 64, "seq": 68}
_OFF_ST1 = {"run": 0, "time": 8, "cpu": 16, "cls": 18, "speed": 20, "mt": 24, "model": 28, "flags": 50,
            "seq": 60, "core": 76}
_OFF_IDS = {"rst": ID_OFF + 8, "rsd": ID_OFF + 12, "start": ID_OFF + 24, "end": ID_OFF + 32}
_DAY_US = 86_400_000_000
_CHUNK = 8192                # rows encoded per numpy block


def _ints(a: np.ndarray) -> np.ndarray:
    """Column -> int64 with ``int()`` semantics (floats truncate, NaN raises)."""
    if a.dtype.kind in "iub":
        return a.astype(np.int64)
    if a.dtype.kind == "f":
        if not np.isfinite(a).all():
            raise ValueError("cannot convert float NaN or infinity to integer")
        return a.astype(np.int64)
    return np.fromiter((int(x) for x in a), np.int64, len(a))


def _truthy(a: np.ndarray) -> np.ndarray:
    return a.astype(bool) if a.dtype.kind in "biuf" else np.fromiter((bool(x) for x in a), bool, len(a))


def _check(name: str, a: np.ndarray, hi: int) -> None:
    if len(a) and (int(a.min()) < 0 or int(a.max()) > hi):
        raise struct.error(f"{name} out of range 0..{hi} for its SMF 113 field")


def _factor_str(a: np.ndarray) -> tuple[np.ndarray, list[str]]:
    """(codes, uniques) of ``str(value)`` per row, without calling str() per row when safe."""
    codes, uniq = pd.factorize(a, use_na_sentinel=False)
    if not (a.dtype.kind in "iuUb" or (a.dtype == object and all(type(u) is str for u in uniq))):
        codes, uniq = pd.factorize(np.array([str(x) for x in a], dtype=object), use_na_sentinel=False)
    return codes, [str(u) for u in uniq]


def _text(codes: np.ndarray, uniq: list[str], width: int, fn=None) -> np.ndarray:
    """Per-row EBCDIC field bytes, shape (rows, width)."""
    raw = b"".join(common.to_ebcdic(fn(u) if fn else u, width) for u in uniq)
    return np.frombuffer(raw, np.uint8).reshape(len(uniq), width)[codes]


def _put(buf: np.ndarray, off: int, vals: np.ndarray, fmt: str) -> None:
    b = np.ascontiguousarray(vals.astype(fmt)).view(np.uint8).reshape(len(buf), -1)
    buf[:, off:off + b.shape[1]] = b


def encode_samples(samples: pd.DataFrame, subtype: int) -> list[bytes]:
    """Encode a counter-sample frame (schema shape) as subtype 1 or 2 records.

    For subtype 2 the counter values must be running totals, for subtype 1
    deltas.  Optional columns ``seqcode`` and ``cls_code``; otherwise the
    sequence code is the serial zero-padded to 16 and the class code comes
    from ``class`` (zCBP sets the zCBP flag).  Only the installed counters of
    each set in ``sets`` (``set_size``) are written; absent columns are 0.

    Vectorized per record shape (sets written, CFVN, CSVN and, for subtype 1,
    which 4-byte-capable sets need 8-byte entries): the constant bytes come from
    one template record per shape, the per-row fields and the counter block
    are filled column-wise.  Byte-identical to the row-by-row reference
    ``_encode_samples_rowwise``.
    """
    n = len(samples)
    if n == 0:
        return []
    cols = set(samples.columns)
    ctr = {c: samples[c].to_numpy(np.uint64) for c in samples.columns if is_counter_column(c)}
    zero = np.zeros(n, np.uint64)
    col = {c: samples[c].to_numpy() for c in samples.columns}
    tod = {c: common.datetime64_to_tod(samples[c].to_numpy("datetime64[ns]")) for c in ("run_start", "time")}
    st2 = subtype == 2
    ident = _has_interval(samples)
    dof = ID_OFF + (40 if ident else 0)
    off = {k: v + dof for k, v in (_OFF_ST2 if st2 else _OFF_ST1).items()}
    if ident:
        tod.update({c: common.datetime64_to_tod(samples[c].to_numpy("datetime64[ns]")) for c in ("rec_start", "rec_end")})

    # per-row fields
    if "class" in cols:
        ccodes, cuniq = _factor_str(col["class"])
    else:
        ccodes, cuniq = np.zeros(n, np.intp), ["GCP"]
    zcbp = np.array([u == "zCBP" for u in cuniq], bool)[ccodes]
    flags = _ints(col["flags"]) if "flags" in cols else np.full(n, 0x4000 if st2 else 0, np.int64)
    flags = flags | np.where(zcbp, 0x0400 if st2 else 0x2000, 0)
    if "lost" in cols:
        flags = flags | np.where(_truthy(col["lost"]), 0x0800 if st2 else 0x8000, 0)
    if st2 and "first" in cols:
        flags = flags | np.where(_truthy(col["first"]), 0x8000, 0)
    if not st2 and "mt_lost" in cols:
        flags = flags | np.where(_truthy(col["mt_lost"]), 0x4000, 0)
    cls_code = (_ints(col["cls_code"]) if "cls_code" in cols
                else np.array([CLASS_CODES.get(u, 0) for u in cuniq], np.int64)[ccodes])
    cpu = _ints(col["cpu"])
    speed = _ints(col["cpu_speed"]) if "cpu_speed" in cols else np.zeros(n, np.int64)
    core = np.maximum(_ints(col["core"]), 0) if "core" in cols else np.zeros(n, np.int64)
    cfvn, csvn = _ints(col["cfvn"]), _ints(col["csvn"])
    for name, a, hi in (("flags", flags, 0xFFFF), ("cls_code", cls_code, 0xFF), ("cpu", cpu, 0xFFFF),
                        ("cpu_speed", speed, 0xFFFFFFFF), ("cfvn", cfvn, 0xFFFF), ("csvn", csvn, 0xFFFF),
                        ("core", core if not st2 else core[:0], 0xFFFF)):        # subtype 2 has no CoreId
        _check(name, a, hi)
    system = _text(*_factor_str(col["system"]), 4)
    mtype = _text(*_factor_str(col["machine_type"]), 4)
    model = _text(*_factor_str(col["model"]), 16) if "model" in cols else _text(np.zeros(n, np.intp), [""], 16)
    seqsrc = "seqcode" if "seqcode" in cols else "serial" if "serial" in cols else None
    seq = (_text(*_factor_str(col[seqsrc]), 16, lambda s: s.rjust(16, "0")) if seqsrc
           else _text(np.zeros(n, np.intp), ["0"], 16, lambda s: s.rjust(16, "0")))
    t = tod["time"]
    lt = _local_tod(samples) if "local_time" in cols else t     # TME/DTE: the system's local time
    ep = np.uint64(common.TOD_UNIX_EPOCH)
    d = lt - ep
    us = np.where(lt >= ep, (d >> np.uint64(12)).astype(np.int64), d.view(np.int64) >> 12)
    day = us // _DAY_US
    tme = (us - day * _DAY_US) // 10_000
    udays, dinv = np.unique(day, return_inverse=True)
    dte = np.frombuffer(b"".join(common.encode_packed_date(_dt.date(1970, 1, 1) + _dt.timedelta(days=int(x)))
                                 for x in udays), np.uint8).reshape(len(udays), 4)[dinv.ravel()]

    # record shapes: sets written x CFVN x CSVN (x 8-byte sets for subtype 1)
    sets = [(t_, bit, LETTER_OF_BIT[bit], BASE_OF_BIT[bit])
            for t_, (bit, _l, _b) in sorted(SMF_SET_TYPES.items()) if not st2 or t_ <= 4]
    allowed = sum(bit for _t, bit, _l, _b in sets)
    mask = _ints(col["sets"]) & allowed
    key = (mask << 32) | (cfvn << 16) | csvn
    ukeys, inv = np.unique(key, return_inverse=True)
    inv = inv.ravel()
    order = np.argsort(inv, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(np.bincount(inv, minlength=len(ukeys)))])
    out: list[bytes | None] = [None] * n
    templates: dict[tuple[int, int], bytes] = {}
    for g, k in enumerate(ukeys.tolist()):
        gall = order[bounds[g]:bounds[g + 1]]
        gmask, gcfvn, gcsvn = k >> 32, (k >> 16) & 0xFFFF, k & 0xFFFF
        for c0 in range(0, len(gall), _CHUNK):          # bounded memory, cache-friendly
            gidx = gall[c0:c0 + _CHUNK]
            mats, wide = [], np.zeros(len(gidx), np.int64)
            for pos, (t_, bit, letter, base) in enumerate(sets):
                if not gmask & bit:
                    continue
                size = set_size(bit, gcfvn, gcsvn)
                m = (np.stack([ctr.get(f"{letter}{base + j}", zero)[gidx] for j in range(size)], axis=1) if size
                     else np.zeros((len(gidx), 0), np.uint64))
                mats.append((t_, m))
                if not st2 and t_ not in WIDE_SETS and size:
                    wide |= (m.max(axis=1) > 0xFFFFFFFF).astype(np.int64) << pos
            for wcode in np.unique(wide).tolist():
                sel = np.flatnonzero(wide == wcode)
                idx = gidx[sel]
                widths = {t_: 8 if st2 or t_ in WIDE_SETS or (wcode >> p) & 1 else 4
                          for p, (t_, _b, _l, _ba) in enumerate(sets)}
                tmpl = templates.get((g, wcode))
                if tmpl is None:                        # constant bytes of this shape, from the record encoder
                    tmpl = templates[g, wcode] = (encode_subtype2 if st2 else encode_subtype1)({
                        "system": "", "cpu": 0, "core": 0, "cls_code": 0, "cpu_speed": 0, "machine_type": "",
                        "model": "", "seqcode": "", "cfvn": gcfvn, "csvn": gcsvn, "flags": 0, "run_start_tod": 0,
                        "time_tod": common.TOD_UNIX_EPOCH, "interval": (0, 0) if ident else None,
                        "counters": {t_: np.zeros(m.shape[1], np.uint64) for t_, m in mats},
                        "widths": {t_: widths[t_] for t_, _m in mats}})
                L = len(tmpl)
                buf = np.empty((len(idx), L), np.uint8)
                buf[:] = np.frombuffer(tmpl, np.uint8)
                _put(buf, _OFF_HDR["tme"], tme[idx], ">u4")
                buf[:, 10:14] = dte[idx]
                buf[:, 14:18] = system[idx]
                if ident:
                    _put(buf, _OFF_IDS["rst"], tme[idx], ">u4")
                    buf[:, _OFF_IDS["rsd"]:_OFF_IDS["rsd"] + 4] = dte[idx]
                    _put(buf, _OFF_IDS["start"], tod["rec_start"][idx], ">u8")
                    _put(buf, _OFF_IDS["end"], tod["rec_end"][idx], ">u8")
                _put(buf, off["run"], tod["run_start"][idx], ">u8")
                _put(buf, off["time"], t[idx], ">u8")
                if st2:
                    _put(buf, off["cpu8"], cpu[idx] & 0xFF, "u1")
                else:
                    _put(buf, off["core"], core[idx], ">u2")
                _put(buf, off["cpu"], cpu[idx], ">u2")
                _put(buf, off["cls"], cls_code[idx], "u1")
                _put(buf, off["flags"], flags[idx], ">u2")
                _put(buf, off["speed"], speed[idx], ">u4")
                buf[:, off["mt"]:off["mt"] + 4] = mtype[idx]
                buf[:, off["model"]:off["model"] + 16] = model[idx]
                buf[:, off["seq"]:off["seq"] + 16] = seq[idx]
                p = L - sum(widths[t_] * m.shape[1] for t_, m in mats)        # counter block at the end
                for t_, m in mats:
                    w = widths[t_] * m.shape[1]
                    if w:
                        _put(buf, p, m[sel], ">u8" if widths[t_] == 8 else ">u4")
                    p += w
                raw = buf.tobytes()
                for j, i in enumerate(idx.tolist()):
                    out[i] = raw[j * L:(j + 1) * L]
    return out  # type: ignore[return-value]


def other_record(rtype: int, length: int, sid: str = "SYSA", when: _dt.datetime | None = None,
                 body: bytes | None = None, rng: np.random.Generator | None = None) -> bytes:
    """A non-113 SMF record (e.g. type 30 or 70) with a valid header and a random body."""
    length = max(int(length), 18)
    when = when or _dt.datetime(2024, 3, 15, 12)
    tme = ((when.hour * 60 + when.minute) * 60 + when.second) * 100 + when.microsecond // 10_000
    hdr = struct.pack(">HHBBI4s4s", length, 0, 0x5E, rtype, tme, common.encode_packed_date(when.date()),
                      common.to_ebcdic(sid, 4))
    if body is None:
        rng = rng or np.random.default_rng(rtype)
        body = rng.integers(0, 256, length - 18, dtype=np.uint8).tobytes()
    return hdr + body[:length - 18].ljust(length - 18, b"\x00")


def frame_rdw(records: Iterable[bytes]) -> bytes:
    """Variant a: records back to back, each with its own RDW."""
    return b"".join(records)


def frame_double_rdw(records: Iterable[bytes]) -> bytes:
    """Variant f: an extra RDW (length + 4) in front of every record."""
    return b"".join(struct.pack(">HH", len(r) + 4, 0) + r for r in records)


def frame_nordw(records: Iterable[bytes]) -> bytes:
    """Variant d: RDWs stripped (FTP binary without ``site rdw``)."""
    return b"".join(r[4:] for r in records)


def frame_bdw(records: Iterable[bytes], blksize: int = 27998, spanned: bool = True) -> bytes:
    """Variants b/c: blocks of at most ``blksize`` bytes, each with a BDW.

    With ``spanned`` (RECFM=VBS) a record that does not fit the space left in
    a block is split into first/middle/last segments (SDW codes 01/11/10);
    otherwise (RECFM=VB) a new block is started.
    """
    blocks: list[bytes] = []
    cur: list[bytes] = []
    used = 4

    def close() -> None:
        nonlocal cur, used
        if cur:
            blocks.append(struct.pack(">HH", used, 0) + b"".join(cur))
        cur, used = [], 4

    for r in records:
        if used + len(r) <= blksize:
            cur.append(r)
            used += len(r)
            continue
        if not spanned:
            close()
            if 4 + len(r) > blksize:
                raise ValueError(f"record of {len(r)} bytes does not fit BLKSIZE {blksize} without spanning")
            cur.append(r)
            used += len(r)
            continue
        data, first = memoryview(r)[4:], True
        while data:
            room = blksize - used - 4
            if room < 1:
                close()
                continue
            part, data = data[:room], data[room:]
            code = (1 if data else 0) if first else (3 if data else 2)
            cur.append(struct.pack(">HBB", 4 + len(part), code, 0) + bytes(part))
            used += 4 + len(part)
            first = False
            if data:
                close()
    close()
    return b"".join(blocks)


def write_smf_file(path: str | Path, records: Iterable[bytes], framing: str = "rdw", gzip: bool = False,
                   blksize: int = 27998) -> Path:
    """Write records as an SMF file in the given framing ('rdw' 'bdw' 'vbs' 'double-rdw' 'nordw')."""
    records = list(records)
    framers = {"rdw": frame_rdw, "double-rdw": frame_double_rdw, "nordw": frame_nordw,
               "bdw": lambda r: frame_bdw(r, blksize, spanned=False), "vbs": lambda r: frame_bdw(r, blksize)}
    if framing not in framers:
        raise ValueError(f"unknown framing {framing!r}")
    data = framers[framing](records)
    path = Path(path)
    path.write_bytes(_gzip.compress(data, 6, mtime=0) if gzip else data)
    return path
