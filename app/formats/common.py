"""Byte-level helpers shared by the SMF and MONWRITE readers and writers.

TOD clock (z/Architecture Principles of Operation): 64-bit unsigned, bit 51 =
1 microsecond, epoch 1900-01-01 00:00:00 UTC.  X'7D91048BCA000000' is the TOD
value of the Unix epoch (2,208,988,800 s x 10^6 x 4096).
"""

from __future__ import annotations

import datetime as _dt
import functools

import numpy as np
import pandas as pd

TOD_UNIX_EPOCH = 0x7D91048BCA000000
TOD_PER_US = 4096
EBCDIC = "cp037"


def tod_to_datetime64(tod: np.ndarray | int) -> np.ndarray:
    """TOD values -> numpy datetime64[ns] (UTC, naive)."""
    arr = np.asarray(tod, dtype=np.uint64)
    us = (arr.astype(np.int64) - np.int64(TOD_UNIX_EPOCH)) >> 12
    return (us * 1000).astype("datetime64[ns]")


def datetime64_to_tod(t: np.ndarray) -> np.ndarray:
    """datetime64 values (UTC, naive) -> TOD values (uint64); inverse of :func:`tod_to_datetime64`."""
    us = np.asarray(t, dtype="datetime64[ns]").astype(np.int64) // 1000
    return (us * TOD_PER_US + np.int64(TOD_UNIX_EPOCH)).astype(np.uint64)


def datetime_to_tod(t: _dt.datetime) -> int:
    """A UTC datetime (naive = UTC) -> TOD clock value."""
    if t.tzinfo is not None:
        t = t.astimezone(_dt.timezone.utc).replace(tzinfo=None)
    us = (t - _dt.datetime(1970, 1, 1)) // _dt.timedelta(microseconds=1)
    return TOD_UNIX_EPOCH + us * TOD_PER_US


def ebcdic(b: bytes) -> str:
    """Decode blank-padded EBCDIC text."""
    return b.decode(EBCDIC, errors="replace").rstrip(" \x00")


def to_ebcdic(s: str, length: int) -> bytes:
    """Encode text as EBCDIC, blank padded (or cut) to ``length``."""
    return s.encode(EBCDIC)[:length].ljust(length, b"\x40")


def normalize_serial(seqcode: str) -> str:
    """Machine sequence code (16 chars, zero-padded) -> the serial analysts quote.

    Both SMF 113 (SMF113_x_MachSeqCode) and z/VM D1R4 (MTRSYS_SYSMSEQC) carry the
    same 16-character code, so the same rule joins z/OS and z/VM LPARs of one CEC.
    """
    s = seqcode.strip().lstrip("0")
    return s or "0"


def cec_id(machine_type: str, seqcode: str) -> str:
    """The CEC key: machine type + serial, e.g. '3931-123F5'."""
    return f"{machine_type.strip() or '????'}-{normalize_serial(seqcode)}"


def packed_date_ok(b: bytes) -> bool:
    """Validate an SMF packed date 0cyydddF (sign C or F, 1 <= ddd <= 366)."""
    if len(b) != 4:
        return False
    nib = [(x >> 4, x & 0xF) for x in b]
    digits = [nib[0][0], nib[0][1], nib[1][0], nib[1][1], nib[2][0], nib[2][1], nib[3][0]]
    if nib[0][0] != 0 or nib[0][1] > 2 or any(d > 9 for d in digits):
        return False
    if nib[3][1] not in (0xC, 0xF):
        return False
    ddd = digits[4] * 100 + digits[5] * 10 + digits[6]
    return 1 <= ddd <= 366


def decode_packed_date(b: bytes) -> _dt.date | None:
    """0cyydddF -> date, or None when invalid."""
    if not packed_date_ok(b):
        return None
    c = b[0] & 0xF
    yy = (b[1] >> 4) * 10 + (b[1] & 0xF)
    ddd = (b[2] >> 4) * 100 + (b[2] & 0xF) * 10 + (b[3] >> 4)
    year = 1900 + 100 * c + yy
    try:
        return _dt.date(year, 1, 1) + _dt.timedelta(days=ddd - 1)
    except ValueError:
        return None


def encode_packed_date(d: _dt.date) -> bytes:
    """date -> 0cyydddF."""
    c = (d.year - 1900) // 100
    yy = d.year % 100
    ddd = d.timetuple().tm_yday
    s = f"0{c}{yy:02d}{ddd:03d}F"
    return bytes.fromhex(s)


def smf_local_datetime64(tme: np.ndarray, dte: np.ndarray) -> np.ndarray:
    """SMF header local time -> naive ``datetime64[ns]`` (NaT where a field is invalid), vectorized.

    ``tme``: SMFxxTME, binary hundredths of a second since local midnight (< 8,640,000); ``dte``: SMFxxDTE as
    the 4-byte big-endian value of the packed date ``0cyydddF`` (smf113.md 3 and 9; sign nibble C or F).
    Each distinct date is decoded once (a month of records holds about 30).
    """
    tme = np.asarray(tme, np.uint64).astype(np.int64)
    codes, dates = pd.factorize(np.asarray(dte, np.uint64))
    midnight, date_ok = _packed_midnights(np.asarray(dates, np.uint64))
    ok = date_ok[codes] & (tme < 8_640_000)
    out = (midnight[codes] + np.where(ok, tme, 0) * 10_000_000).view("datetime64[ns]")
    out[~ok] = np.datetime64("NaT")
    return out


def _packed_midnights(v: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(local midnight as int64 nanoseconds since 1970, valid) of each packed date ``0cyydddF`` of ``v``."""
    nib = [((v >> np.uint64(4 * k)) & np.uint64(0xF)).astype(np.int64) for k in range(8)]   # nib[0] = sign
    ok = (nib[7] == 0) & (nib[6] <= 2) & ((nib[0] == 0xF) | (nib[0] == 0xC))
    for d in nib[1:7]:
        ok &= d <= 9
    ddd = nib[3] * 100 + nib[2] * 10 + nib[1]
    year = 1900 + 100 * nib[6] + 10 * nib[5] + nib[4]
    leap = ((year % 4 == 0) & (year % 100 != 0)) | (year % 400 == 0)
    ok &= (ddd >= 1) & (ddd <= np.where(leap, 366, 365))
    jan1 = (np.where(ok, year, 1970) - 1970).astype("datetime64[Y]").astype("datetime64[D]")
    days = jan1 + np.where(ok, ddd - 1, 0).astype("timedelta64[D]")
    return days.astype("datetime64[ns]").view(np.int64), ok


def categorical_from_codes(labels, codes: np.ndarray) -> pd.Categorical:
    """What ``astype("category")`` of the object array ``labels[codes]`` gives (sorted categories, None as
    missing, equal labels one category), built from the codes: one label per distinct value instead of one
    Python string per row."""
    labels = tuple(labels)
    dtype, where = (_label_dtype if len(labels) <= 64 else _label_dtype.__wrapped__)(labels)
    return pd.Categorical.from_codes(where[codes], dtype=dtype, validate=False)


@functools.lru_cache(maxsize=1024)
def _label_dtype(labels: tuple) -> tuple[pd.CategoricalDtype, np.ndarray]:
    """The categorical dtype ``astype("category")`` gives the labels, and each label's category code: made once
    per distinct label list (every read of one machine's records asks for the same few lists)."""
    arr = np.asarray(labels, dtype=object)
    dtype = pd.Series(arr).astype("category").dtype
    where = dtype.categories.get_indexer(arr)
    where.flags.writeable = False
    return dtype, where
