"""The counter-sample frame: the one shape every reader returns.

One row per logical CPU per record (= per interval).  Identity columns first,
then one ``uint64`` column per architected counter, named by set letter and
counter number: ``B0``..``B5`` basic, ``P32``.. problem-state, ``K64``.. crypto,
``E128``..``E287`` extended, ``M448``..``M495`` MT-diagnostic.  Only counters of
sets present somewhere in the file get a column; a row whose record lacks a set
has 0 in those columns and the set's bit cleared in ``sets``.

Whether values are deltas (SMF 113 subtype 1) or running totals (SMF 113
subtype 2, z/VM D5R13) is the ``kind`` column: ``"delta"`` or ``"absolute"``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from app.findings import Finding

# Counter-set activation bits, as in the hardware counter-set control halfword
# (Linux cpumf_ctr_ctl; z/VM PRCMFC_CCFCMFAC uses the same values, UNCONFIRMED).
SET_EXTENDED = 0x0001
SET_BASIC = 0x0002
SET_PROBLEM = 0x0004
SET_CRYPTO = 0x0008
SET_MT = 0x0020

# SMF 113 counter-set type code -> (activation bit, set letter, first counter number)
SMF_SET_TYPES: dict[int, tuple[int, str, int]] = {
    1: (SET_BASIC, "B", 0),
    2: (SET_PROBLEM, "P", 32),
    3: (SET_CRYPTO, "K", 64),
    4: (SET_EXTENDED, "E", 128),
    6: (SET_MT, "M", 448),
}
SET_NAMES = {SET_BASIC: "basic", SET_PROBLEM: "problem-state", SET_CRYPTO: "crypto",
             SET_EXTENDED: "extended", SET_MT: "MT-diagnostic"}
LETTER_OF_BIT = {SET_BASIC: "B", SET_PROBLEM: "P", SET_CRYPTO: "K", SET_EXTENDED: "E", SET_MT: "M"}
BIT_OF_LETTER = {v: k for k, v in LETTER_OF_BIT.items()}
BASE_OF_BIT = {SET_BASIC: 0, SET_PROBLEM: 32, SET_CRYPTO: 64, SET_EXTENDED: 128, SET_MT: 448}


def set_size(bit: int, cfvn: int, csvn: int) -> int:
    """Installed counters of a set for the counter version numbers (metrics.md 1.1)."""
    if bit == SET_BASIC:
        return 6 if cfvn >= 1 else 0
    if bit == SET_PROBLEM:
        return 6 if cfvn == 1 else (2 if cfvn >= 3 else 0)
    if bit == SET_CRYPTO:
        return 16 if 1 <= csvn <= 5 else (20 if csvn >= 6 else 0)
    if bit == SET_EXTENDED:
        return {1: 32, 2: 48}.get(csvn, 128 if 3 <= csvn <= 5 else (160 if csvn >= 6 else 0))
    if bit == SET_MT:
        return 48 if csvn > 3 else 0
    return 0


def counter_name(number: int) -> str:
    """Architected counter number -> column name (B0, P33, E143, M448...)."""
    if number < 32:
        return f"B{number}"
    if number < 64:
        return f"P{number}"
    if number < 128:
        return f"K{number}"
    if number < 448:
        return f"E{number}"
    return f"M{number}"


def counter_number(name: str) -> int:
    return int(name[1:])


def is_counter_column(name: str) -> bool:
    return len(name) > 1 and name[0] in "BPKEM" and name[1:].isdigit()


# Identity columns of the counter-sample frame, in order, with their dtypes.
IDENTITY_COLUMNS: dict[str, str] = {
    "source": "category",     # file path as given
    "offset": "int64",        # byte offset of the record in the (decompressed) file
    "cec": "category",        # machine type + serial, e.g. '3931-123F5'  (common.cec_id)
    "machine_type": "category",
    "model": "category",
    "serial": "category",     # normalized sequence code (common.normalize_serial)
    "lpar": "category",       # LPAR name (z/OS: the SMF system id, SMF 113 has no LPAR name)
    "system": "category",     # SMF SID / z/VM system name
    "os": "category",         # 'z/OS' or 'z/VM'
    "class": "category",      # GCP zAAP zCBP zIIP (z/OS) ; CP IFL zIIP ICF zAAP (z/VM)
    "cpu": "int32",           # decimal logical CPU id / CPU address
    "core": "int32",          # core id, -1 when unknown
    "run_start": "datetime64[ns]",  # collection run start (SMF CTS); NaT for z/VM
    "time": "datetime64[ns]",       # record time = end of the interval (UTC from TOD)
    "cpu_speed": "int64",     # cycles per microsecond
    "cfvn": "int32",
    "csvn": "int32",
    "flags": "int32",         # raw record flags
    "lost": "bool",           # hardware lost counter data in the interval
    "mt_lost": "bool",        # MT counter data lost
    "first": "bool",          # first record of a run (baseline only, subtype 2)
    "kind": "category",       # 'delta' | 'absolute'
    "sets": "int32",          # activation bits of the sets present in this record
}


def empty_samples() -> pd.DataFrame:
    """An empty counter-sample frame with the identity columns (a copy of one made once: each reader call,
    e.g. every chunk of a streamed extract, starts from one, and building its columns took tens of ms)."""
    global _EMPTY
    if _EMPTY is None:
        _EMPTY = pd.DataFrame({c: pd.Series(dtype=t) for c, t in IDENTITY_COLUMNS.items()})
    return _EMPTY.copy()


_EMPTY: pd.DataFrame | None = None


@dataclass
class ReadResult:
    """Everything read from one input file.

    ``records`` counts records by kind: for SMF ``"113/1"``, ``"113/2"``,
    ``"other"``; for MONWRITE ``"D5R13"``, ``"D0R2"``... and ``"other"``.
    ``partitions`` (MONWRITE D0R16) has one row per partition per interval:
    cec, lpar, lpar_number, class, cpus, weight, capped, busy_pct, time.
    ``mt`` (MONWRITE D0R2 / derived) has per-core MT rows as z/VM reports them.
    """

    file: str
    kind: str                      # 'smf' | 'monwrite' | 'unknown'
    framing: str                   # e.g. 'rdw', 'bdw', 'vbs', 'double-rdw', 'rdw+gzip', 'monwrite'
    records: dict[str, int]
    samples: pd.DataFrame
    findings: list[Finding] = field(default_factory=list)
    partitions: pd.DataFrame | None = None
    mt: pd.DataFrame | None = None
    size: int = 0
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def readable(self) -> bool:
        return len(self.samples) > 0 or (self.partitions is not None and len(self.partitions) > 0)


class Cancelled(Exception):
    """Raised by a reader when the caller's cancel callback returns True."""
