"""Mutation fuzzing of the readers: clean references, mutations with their damaged span, a watchdog, the checks.

Levels
------
* framing level (thousands of cases, fast): SMF via ``frame_records`` (record bytes), MONWRITE via
  ``walk_monwrite`` (the raw counter pieces of every D5R13), gzip via ``formats.gunzip`` first.  Equal
  record bytes decode to equal counters, so "records before the damage decode to the same counters" is
  checked on the bytes.
* reader level (hundreds of cases): ``read_bytes`` end to end, the same checks on the counter samples.

A mutation is applied to the clean file; its damaged span ``[lo, hi)`` is in clean-file offsets
(an insertion at p is ``[p, p)``, a cut at p is ``[p, inf)``).
"""

from __future__ import annotations

import math
import signal
import threading
import time
from dataclasses import dataclass, field

from app import formats
from app.formats.monwrite import walk_monwrite
from app.formats.schema import ReadResult
from app.formats.smf_framing import frame_records

NAME = "fuzz.bin"
INF = math.inf
HOSTILE16 = (0, 1, 5, 0x7FFF, 0x8000, 0xFFFF)
HOSTILE32 = (0, 1, 5, 0x7FFF, 0x8000, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF)

STATS = {"cases": 0, "slowest": 0.0, "slowest_case": "", "exceptions": 0}


class Watchdog(Exception):
    pass


@dataclass
class Item:
    start: int            # clean-file span of the record (all its bytes)
    end: int
    unit: int             # start of the unit (record / block) it belongs to
    key: object           # what must be found again (record bytes, or (cpu, tod, counter bytes))
    offset: int           # offset the reader reports for it


@dataclass
class Ref:
    kind: str             # 'smf' or 'monwrite'
    variant: str          # framing
    data: bytes
    items: list[Item]
    units: list[tuple[int, int]]
    seconds: float = 0.0
    extra: dict = field(default_factory=dict)


# ------------------------------------------------------------------ readers at framing level
def smf_items(data) -> tuple[list[tuple[int, bytes]], list]:
    fr = frame_records(data, NAME)
    return [(int(o), bytes(r)) for o, r in fr.records], fr.findings


def mon_items(data) -> tuple[list[tuple[int, object]], list]:
    w = walk_monwrite(data, NAME)
    if isinstance(w, ReadResult):
        return [], w.findings
    out = []
    for mt, _interval, meta, piece in w.series:
        out.append((w.fo(meta[0]), (mt, meta[1], meta[6], bytes(piece))))
    w.close_findings()
    return out, w.findings


def gz_then(fn):
    def read(data):
        if data[:2] != b"\x1f\x8b":
            return fn(data)
        out, found, stop = formats.gunzip(data, NAME)
        items, f2 = fn(bytes(out)) if out else ([], [])
        return items, [*found, *f2]
    return read


# ------------------------------------------------------------------ clean references
def _units_smf(data: bytes, variant: str) -> list[tuple[int, int]]:
    units, p, n = [], 0, len(data)
    while p + 4 <= n:
        ln = (data[p] << 8) | data[p + 1]
        units.append((p, p + ln))
        p += ln
    return units


def _units_mon(data: bytes, wrapped: bool) -> list[tuple[int, int]]:
    """Blocks (control record + its pages) of a clean MONWRITE stream."""
    from app.formats.monwrite import _control_entries
    page = 4096
    step = 4100 if wrapped else page
    raw = C_unwrap(data) if wrapped else data
    units, off = [], 0
    while off + page <= len(raw):
        ents = _control_entries(raw, off)
        span = sum(((t >> 12) - (s >> 12) + 1) for _f, _a, _b, s, t in ents) * page
        units.append((off // page * step, (off + page + span) // page * step))
        off += page + span
    return units


def C_unwrap(data: bytes) -> bytes:
    return b"".join(data[i + 4:i + 4100] for i in range(0, len(data), 4100))


def reference(kind: str, variant: str, data: bytes) -> Ref:
    read = smf_items if kind == "smf" else mon_items
    t = time.perf_counter()
    got, findings = read(data)
    secs = time.perf_counter() - t
    assert findings == [], f"clean {variant} file has findings: {[f.message for f in findings]}"
    units = _units_smf(data, variant) if kind == "smf" else _units_mon(data, variant == "monwrite-rdw")
    starts = [u[0] for u in units]
    items = []
    offs = [o for o, _ in got]
    for i, (o, key) in enumerate(got):
        start = o - (4 if variant == "double-rdw" else 0)
        if kind == "monwrite":
            end = o + ((data[o] << 8) | data[o + 1])          # the D5R13 record itself
        else:
            end = (offs[i + 1] - (4 if variant == "double-rdw" else 0)) if i + 1 < len(offs) else len(data)
        unit = max((s for s in starts if s <= start), default=0)
        items.append(Item(start, end, unit, key, o))
    return Ref(kind, variant, data, items, units, secs)


# ------------------------------------------------------------------ mutations
def apply(data: bytes, ops: list[tuple]) -> tuple[bytes, float, float]:
    """Apply ops (positions in clean offsets) from the highest position down; -> (bytes, lo, hi)."""
    d = bytearray(data)
    lo, hi = INF, -INF
    floor = INF                                     # ops must not overlap: each ends before the last start
    for op in sorted(ops, key=lambda o: -o[1]):
        name, p = op[0], min(op[1], len(data))
        extent = {"flip": 1, "set": len(op[2]) if name == "set" else 0, "ins": 0,
                  "del": op[2] if name == "del" else 0, "cut": INF,
                  "block": (op[2] - p) if name == "block" else 0}[name]
        if p + extent > floor:
            continue
        floor = p
        if name == "flip":
            if p < len(d):
                d[p] ^= 1 << op[2]
                lo, hi = min(lo, p), max(hi, p + 1)
        elif name == "set":
            b = op[2][:max(0, len(data) - p)]
            d[p:p + len(b)] = b
            lo, hi = min(lo, p), max(hi, p + len(b))
        elif name == "ins":
            d[p:p] = op[2]
            lo, hi = min(lo, p), max(hi, p)
        elif name == "del":
            del d[p:p + op[2]]
            lo, hi = min(lo, p), max(hi, min(len(data), p + op[2]))
        elif name == "cut":
            del d[p:]
            lo, hi = min(lo, p), INF
        elif name == "block":                       # (block, p, q, bytes): replace clean span [p, q)
            d[p:op[2]] = op[3]
            lo, hi = min(lo, p), max(hi, op[2])
    return bytes(d), lo, hi


# ------------------------------------------------------------------ the run and the checks
def _alarm(signum, frame):
    raise Watchdog()


def run_guarded(fn, data, limit: float):
    """fn(data) under a watchdog of ``limit`` seconds (SIGALRM in the main thread)."""
    main = threading.current_thread() is threading.main_thread() and hasattr(signal, "setitimer")
    if main:
        old = signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, limit)
    t = time.perf_counter()
    try:
        return fn(data), time.perf_counter() - t
    finally:
        if main:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, old)


def check(ref: Ref, ops: list[tuple], read, *, gz: bool = False, label: str = "") -> None:
    """Mutate, read under the watchdog, then check the properties of the issue."""
    data, lo, hi = apply(ref.data, ops)
    limit = max(2.0, 100 * ref.seconds)
    STATS["cases"] += 1
    try:
        (items, findings), secs = run_guarded(read, data, limit)
    except Watchdog:
        raise AssertionError(f"case ran longer than {limit:.1f} s (100x the clean file): {label} {ops}") from None
    except Exception as exc:
        STATS["exceptions"] += 1
        raise AssertionError(f"exception escaped the reader: {type(exc).__name__}: {exc} -- {label} {ops}") from exc
    if secs > STATS["slowest"]:
        STATS["slowest"], STATS["slowest_case"] = secs, f"{label} {ops!r:.200}"
    for f in findings:
        assert f.file == NAME, f.message
    got_at = {(o, _k(k)) for o, k in items}
    got_keys = {_k(k) for _o, k in items}
    # a record the damage touches may come back changed (undetectable) or not at all; one it does not
    # touch must come back unchanged; either loss needs a finding with an offset
    touched = [it for it in ref.items if it.start < hi and it.end > lo or (lo == hi and it.start < lo < it.end)]
    lost = [it for it in ref.items if it not in touched and _k(it.key) not in got_keys]
    if lost:
        assert any(f.offset is not None for f in findings), \
            f"{len(lost)} records lost without a finding with an offset -- {label} {ops}"
    if gz:
        return                                           # damage positions are in compressed bytes
    for it in ref.items:
        if it.end <= lo:                                 # before the damage: same record, same offset
            assert (it.offset, _k(it.key)) in got_at, \
                f"record at {it.offset} before the damage at {lo} was not read the same -- {label} {ops}"
    if hi < INF:
        after = [u for u in ref.units if u[0] >= hi]
        if len(after) >= 3:                              # a valid chain of units follows the damage
            for it in ref.items:
                if it.unit >= after[0][0]:
                    assert _k(it.key) in got_keys, \
                        f"record at clean offset {it.offset} after the damage [{lo}, {hi}) was not found " \
                        f"again -- {label} {ops}"


def _k(key):
    return key
