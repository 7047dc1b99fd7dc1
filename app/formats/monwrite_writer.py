"""Byte-exact MONWRITE writer (sample data, tests, benchmarks).

Produces what :mod:`app.formats.monwrite` reads, with the layouts of
:mod:`app.formats.monwrite_records`: one block per interval (4 KB control
record + DCSS pages), records packed into 4 KB frames, never split across a
frame; a frame that cannot take the next record ends with D1R13, the interval
ends with D1R11.  Configuration records (D1R4, D1R5, D0R15) form their own
first block, closed by D1R11 as CP does.

Example
-------
>>> w = MonwriteWriter("VMSYS1", "LPVM1", 3, "3931", "A01", "00000000000123F5")
>>> w.config(processors=[(0, 3, 0), (1, 3, 0)])
>>> w.sample_interval(t, counters=[CounterRecord(0, values, mask=0x0006, cfvn=3, csvn=7, cpu_speed=5200)])
>>> data = w.to_bytes()
"""

from __future__ import annotations

import datetime as _dt
import gzip as _gzip
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from app.formats import monwrite_records as R
from app.formats.common import datetime_to_tod, to_ebcdic
from app.formats.schema import SET_MT, counter_number, is_counter_column, set_size

__all__ = ["MonwriteWriter", "CounterRecord", "MtCounterRecord", "MtRecord", "Partition", "PartitionCpu",
           "write_samples", "pack_counters"]


@dataclass
class CounterRecord:
    """One CPU's D5R13 data: ``values`` in buffer order (see :func:`pack_counters`)."""
    cpu: int
    values: np.ndarray
    mask: int
    cfvn: int
    csvn: int
    cpu_speed: int = 0


@dataclass
class MtCounterRecord:
    """One CPU's D5R20 data: ``values`` = M448, M449, ..."""
    cpu: int
    values: np.ndarray
    cfvn: int = 3
    csvn: int = 7
    cpu_speed: int = 0


@dataclass
class MtRecord:
    """One CPU's D0R2 with the MT fields (None = not available)."""
    cpu: int
    core: int | None = None
    type_code: int | None = None
    thread_density: float | None = None
    thread_density_type: float | None = None
    core_busy_pct: float | None = None
    productivity: float | None = None
    mt_util_pct: float | None = None
    capacity_factor: float | None = None
    max_capacity_factor: float | None = None


@dataclass
class PartitionCpu:
    """A logical CPU of a partition in D0R16; times are cumulative microseconds."""
    cpu: int
    type_name: str
    weight: int = 0
    busy_time: int = 0
    lpar_time: int = 0
    capped: bool = False


@dataclass
class Partition:
    name: str
    number: int
    cpus: list[PartitionCpu] = field(default_factory=list)


def pack_counters(mask: int, cfvn: int, csvn: int, values: dict[int, int]) -> np.ndarray:
    """{counter number: value} -> buffer-order array for ``mask``/CFVN/CSVN (missing = 0)."""
    return np.array([values.get(n, 0) for n in R.counter_numbers(mask, cfvn, csvn)], dtype=np.uint64)


def _with_rdw(data: bytes) -> bytes:
    """X'10040000' (RDW of a 4100-byte record) before every 4096-byte page."""
    return b"".join(R.RDW_4100 + data[i:i + R.PAGE] for i in range(0, len(data), R.PAGE))


def _tod(t: _dt.datetime | pd.Timestamp | np.datetime64 | int) -> int:
    if isinstance(t, (int, np.integer)):
        return int(t)
    return datetime_to_tod(pd.Timestamp(t).to_pydatetime())


class MonwriteWriter:
    """Builds a MONWRITE byte stream block by block.

    Parameters
    ----------
    system, lpar, lpar_number, machine_type, model, seqcode
        D1R4 identity (seqcode = 16-character sequence code, e.g. '00000000000123F5').
    max_counter_bytes : int
        Counter bytes per D5R13/D5R20 record; longer data becomes a P-bit series.
    time_unit : {'us', 'tod'}
        Unit of the D0R16 dispatch times written.
    """

    def __init__(self, system: str, lpar: str, lpar_number: int, machine_type: str, model: str, seqcode: str,
                 *, max_counter_bytes: int = 1000, time_unit: str = "us", msgid: int = 1, pathid: int = 1,
                 mca_addr: int = 0x0A000000, dcss_first: int = 0x0A100000, dcss_end: int = 0x0C000000,
                 zone_offset_s: int = 0) -> None:
        self.ident = (system, lpar, lpar_number, machine_type, model, seqcode)
        self.zone_offset_s = zone_offset_s      # D1R4 MTRSYS_SYSZONE: seconds east of UTC
        self.chunk = max(8, max_counter_bytes // 8 * 8)
        self.tscale = 4096 if time_unit == "tod" else 1
        self.msgid, self.pathid, self.mca = msgid, pathid, mca_addr
        self.first, self.end, self.page = dcss_first, dcss_end, dcss_first
        self._out: list[bytes] = []
        self._config: tuple | None = None

    # ------------------------------------------------------------ records
    @staticmethod
    def record(dom: int, rc: int, tod: int, body: bytes = b"", flags: int = 0) -> bytes:
        """MRRECHDR + body."""
        return R.HDR.pack(R.HDR_LEN + len(body), 0, dom, flags, rc, tod) + body

    def d1r4(self, tod: int) -> bytes:
        system, lpar, lpnum, mtype, model, seq = self.ident
        b = bytearray(R.SYS_LEN - R.HDR_LEN)
        for (o, ln), s in ((R.SYS_SYSTMID, system), (R.SYS_MTYPE, mtype), (R.SYS_MODEL, model),
                           (R.SYS_SEQC, seq), (R.SYS_LPARNAME, lpar)):
            b[o - 20:o - 20 + ln] = to_ebcdic(s, ln)
        b[R.SYS_LPNUM - 20:R.SYS_LPNUM - 18] = lpnum.to_bytes(2, "big")
        b[R.SYS_ZONE - 20:R.SYS_ZONE - 16] = int(self.zone_offset_s).to_bytes(4, "big", signed=True)
        return self.record(1, 4, tod, bytes(b))

    def d1r5(self, tod: int, cpu: int, type_code: int, core: int | None) -> bytes:
        b = bytearray(R.PRP_LEN - R.HDR_LEN)
        b[R.PRP_CPU - 20:R.PRP_CPU - 18] = cpu.to_bytes(2, "big")
        b[R.PRP_CPUTY - 20] = type_code
        b[R.PRP_CORE - 20:R.PRP_CORE - 18] = (0xFFFF if core is None else core).to_bytes(2, "big")
        return self.record(1, 5, tod, bytes(b))

    def d0r2(self, tod: int, m: MtRecord) -> bytes:
        b = bytearray(R.PRP2_LEN - R.HDR_LEN)
        b[0:2] = m.cpu.to_bytes(2, "big")
        b[4:12] = (0x7FFFFFFF00000000).to_bytes(8, "big")          # PFXPRBTM counts down from here
        b[R.PRP2_CPUTY - 20] = 0 if m.type_code is None else m.type_code
        for name, o in R.MT_FIELDS:
            v = getattr(m, name)
            raw = R.MT_NA if v is None or v != v else int(round(v * R.MT_SCALE))
            b[o - 20:o - 16] = raw.to_bytes(4, "big")
        b[R.MT_CORE - 20:R.MT_CORE - 18] = (0xFFFF if m.core is None else m.core).to_bytes(2, "big")
        return self.record(0, 2, tod, bytes(b))

    def d0r15(self, tod: int, npar: int) -> bytes:
        b = bytearray(R.CUG_LEN - R.HDR_LEN)
        b[0] = npar
        o, ln = R.CUG_LPARNAME
        b[o - 20:o - 20 + ln] = to_ebcdic(self.ident[1], ln)
        return self.record(0, 15, tod, bytes(b))

    def d0r16(self, tod: int, p: Partition) -> list[bytes]:
        per = (R.PAGE - 2 * R.HDR_LEN - R.CUP_FIXED) // R.CUPCPU_LEN
        parts = [p.cpus[i:i + per] for i in range(0, len(p.cpus), per)] or [[]]
        out = []
        for cpus in parts:
            body = R.CUP.pack(to_ebcdic(p.name, 8), p.number, 0, len(cpus), R.CUP_FIXED, R.CUPCPU_LEN, tod)
            body += bytes(R.CUP_FIXED - 20 - len(body))
            body += b"".join(R.CUPCPU.pack(c.cpu, c.weight, R.CUP_CAPPED if c.capped else 0,
                                           c.busy_time * self.tscale, c.lpar_time * self.tscale,
                                           to_ebcdic(c.type_name, 16)) for c in cpus)
            out.append(self.record(0, 16, tod, body))
        return out

    def mfc(self, tod: int, rc: int, cpu: int, speed: int, mask: int, cfvn: int, csvn: int,
            values: np.ndarray | bytes) -> list[bytes]:
        """D5R13 (rc 13) or D5R20 (rc 20) series; P bit on every record but the last."""
        data = values if isinstance(values, bytes) else np.asarray(values, dtype=">u8").tobytes()
        pieces = [data[i:i + self.chunk] for i in range(0, len(data), self.chunk)] or [b""]
        last = len(pieces) - 1
        return [self.record(5, rc, tod, R.MFC.pack(cpu, speed, mask, cfvn, csvn, R.MFC_FIXED, len(pc)) + pc,
                            0 if i == last else R.P_BIT) for i, pc in enumerate(pieces)]

    # ------------------------------------------------------------ blocks
    def block(self, entries: list[tuple[int, list[bytes], bool]], tod: int) -> None:
        """One control record + pages; ``entries`` = [(E2|C5, records, end with D1R11)]."""
        ca, pages = [], []
        for kind, recs, interval_end in entries:
            frames, cur = [], bytearray()
            doms = {r[4] for r in recs} | ({1} if interval_end else set())
            for r in recs:
                if len(cur) + len(r) > R.PAGE - R.HDR_LEN:
                    cur += self.record(1, 13, tod)
                    doms.add(1)
                    frames.append(cur)
                    cur = bytearray()
                cur += r
            if interval_end:
                cur += self.record(1, 11, tod)
            frames.append(cur)
            if self.page + len(frames) * R.PAGE > self.end:
                self.page = self.first
            start = self.page
            end = start + (len(frames) - 1) * R.PAGE + len(cur) - 1
            self.page += len(frames) * R.PAGE
            d1, d2 = R.domain_bits(doms)
            ca.append(R.CA_ENTRY.pack(kind, d1, d2, 0, start, end))
            pages.extend(bytes(f) + bytes(R.PAGE - len(f)) for f in frames)
        ctl = R.IPARML.pack(self.pathid, R.IPFLAGS1_RMDATA, 0x09, self.msgid, 0, self.mca,
                            self.mca + 12 * len(ca) - 1) + b"".join(ca)
        self.msgid += 1
        self._out.append(ctl + bytes(R.PAGE - len(ctl)))
        self._out.extend(pages)

    def config(self, processors: list[tuple[int, int, int | None]], *, partitions_defined: int | None = None,
               time=None) -> None:
        """Configuration block: D1R4, D1R5 per ``(cpu, type_code, core)``, D0R15; written before the first interval."""
        self._config = (processors, partitions_defined, time)

    def _flush_config(self, tod: int) -> None:
        processors, npar, t = self._config
        self._config = None
        tod = tod if t is None else _tod(t)
        recs = [self.d1r4(tod)] + [self.d1r5(tod, c, ty, co) for c, ty, co in processors]
        if npar is not None:
            recs.append(self.d0r15(tod, npar))
        self.block([(R.ENTRY_SAMPLE, recs, True)], tod)

    def sample_interval(self, time, *, counters: list[CounterRecord] = (), mt_counters: list[MtCounterRecord] = (),
                        mt: list[MtRecord] = (), partitions: list[Partition] = (), npar: int | None = None,
                        extra: list[bytes] = (), event_records: list[bytes] = ()) -> None:
        """One interval: D0R15/D0R16, D0R2, D5R13, D5R20 (+extra records) then D1R11."""
        tod = _tod(time)
        if self._config is not None:
            self._flush_config(tod)
        recs: list[bytes] = []
        if npar is not None:
            recs.append(self.d0r15(tod, npar))
        for p in partitions:
            recs += self.d0r16(tod, p)
        recs += [self.d0r2(tod, m) for m in mt]
        for c in counters:
            recs += self.mfc(tod, 13, c.cpu, c.cpu_speed, c.mask, c.cfvn, c.csvn, c.values)
        for c in mt_counters:
            recs += self.mfc(tod, 20, c.cpu, c.cpu_speed, SET_MT, c.cfvn, c.csvn, c.values)
        recs += list(extra)
        entries = [(R.ENTRY_SAMPLE, recs, True)]
        if event_records:
            entries.append((R.ENTRY_EVENT, list(event_records), False))
        self.block(entries, tod)

    def to_bytes(self) -> bytes:
        if self._config is not None:
            self._flush_config(_tod(self._config[2] or _dt.datetime(2000, 1, 1)))
        return b"".join(self._out)

    def write(self, path: str | Path, gzip: bool = False, rdw: bool = False) -> Path:
        """Write the file (``rdw``: X'10040000' before every 4096-byte record; ``gzip``: compress)."""
        data = self.to_bytes()
        if rdw:
            data = _with_rdw(data)
        if gzip:
            data = _gzip.compress(data, compresslevel=6, mtime=0)
        p = Path(path)
        p.write_bytes(data)
        return p


def _by_time(times: np.ndarray) -> dict[int, np.ndarray]:
    """datetime64 column -> {ns: row indices}, rows in original order."""
    ns = np.asarray(times, dtype="datetime64[ns]").astype(np.int64)
    order = np.argsort(ns, kind="stable")
    keys, starts = np.unique(ns[order], return_index=True)
    return {int(k): idx for k, idx in zip(keys, np.split(order, starts[1:]))}


def write_samples(samples: pd.DataFrame, partitions: pd.DataFrame | None = None, mt: pd.DataFrame | None = None,
                  *, path: str | Path | None = None, gzip: bool = False, rdw: bool = False,
                  max_counter_bytes: int = 1000, interval_s: float = 60.0, zone_offset_s: int = 0) -> bytes:
    """Counter-sample frame (absolute counters, one z/VM system) -> MONWRITE bytes.

    ``partitions``: rows cec, lpar, lpar_number, class, cpus, weight, capped, busy_pct, time
    (cumulative dispatch times are integrated from ``busy_pct``).  ``mt``: rows of the
    ``ReadResult.mt`` shape.  Counters missing from the frame are written as 0 (an MT set is
    always written with its architected 48 counters).  ``zone_offset_s``: the system's UTC offset in seconds
    (D1R4 MTRSYS_SYSZONE; z/VM states one offset per monitor start).  Returns the bytes (also written to
    ``path`` when given).
    """
    s0 = samples.iloc[0]
    lpar = str(s0["lpar"])
    lpnum = 1
    if partitions is not None and len(partitions):
        own = partitions[partitions["lpar"] == lpar]
        lpnum = int(own["lpar_number"].iloc[0]) if len(own) else 1
    w = MonwriteWriter(str(s0["system"]), lpar, lpnum, str(s0["machine_type"]), str(s0["model"]),
                       str(s0["serial"]).rjust(16, "0"), max_counter_bytes=max_counter_bytes,
                       zone_offset_s=zone_offset_s)
    procs = samples.drop_duplicates("cpu").sort_values("cpu")
    w.config([(int(c), R.TYPE_CODES.get(str(k), 0), None if int(co) < 0 else int(co))
              for c, k, co in zip(procs["cpu"], procs["class"], procs["core"])])
    num_of = {counter_number(c): c for c in samples.columns if is_counter_column(c)}
    cpu = samples["cpu"].to_numpy(np.int64)
    speed = samples["cpu_speed"].to_numpy(np.int64)
    cfvn = samples["cfvn"].to_numpy(np.int64)
    csvn = samples["csvn"].to_numpy(np.int64)
    sets = samples["sets"].to_numpy(np.int64)
    nonmt = sets & ~SET_MT
    n = len(samples)

    def matrix(rows: np.ndarray, nums: list[int]) -> np.ndarray:
        out = np.zeros((len(rows), len(nums)), dtype=">u8")
        for j, x in enumerate(nums):
            if x in num_of:
                out[:, j] = samples[num_of[x]].to_numpy(np.uint64)[rows]
        return out

    raw: list[bytes | None] = [None] * n               # D5R13 counter bytes per row
    layout_of = pd.MultiIndex.from_arrays([nonmt, cfvn, csvn])
    for key in layout_of.unique():
        m, fv, sv = (int(x) for x in key)
        nums = R.counter_numbers(m, fv, sv)
        rows = np.flatnonzero((nonmt == m) & (cfvn == fv) & (csvn == sv))
        if nums and m:
            mat = matrix(rows, nums)
            for k, r in enumerate(rows):
                raw[r] = mat[k].tobytes()
    rawm: list[bytes | None] = [None] * n              # D5R20 bytes per row
    mt_rows = np.flatnonzero(sets & SET_MT)
    if len(mt_rows):
        size = max(set_size(SET_MT, int(cfvn[mt_rows[0]]), int(csvn[mt_rows[0]])), 48)
        mat = matrix(mt_rows, list(range(448, 448 + size)))
        for k, r in enumerate(mt_rows):
            rawm[r] = mat[k].tobytes()
    by_time = _by_time(samples["time"].to_numpy())
    mt_by = _by_time(mt["time"].to_numpy()) if mt is not None and len(mt) else {}
    part_by = _by_time(partitions["time"].to_numpy()) if partitions is not None and len(partitions) else {}
    if mt_by:
        mcols = {c: mt[c].to_numpy() for c in mt.columns}
    if part_by:
        pcols = {c: partitions[c].to_numpy() for c in ("lpar", "lpar_number", "class", "cpus", "weight",
                                                       "capped", "busy_pct")}
    cum: dict[tuple[str, str], float] = {}
    prev = None
    for t in sorted(set(by_time) | set(mt_by) | set(part_by)):
        rows = by_time.get(t, ())
        counters = [CounterRecord(int(cpu[r]), raw[r], int(nonmt[r]), int(cfvn[r]), int(csvn[r]), int(speed[r]))
                    for r in rows if raw[r] is not None]
        mtc = [MtCounterRecord(int(cpu[r]), rawm[r], int(cfvn[r]), int(csvn[r]), int(speed[r]))
               for r in rows if rawm[r] is not None]
        mts = []
        for r in mt_by.get(t, ()):
            vals = [mcols[c][r] if c in mcols else np.nan
                    for c in ("thread_density", "thread_density_type", "core_busy_pct", "productivity",
                              "mt_util_pct", "capacity_factor", "max_capacity_factor")]
            core = int(mcols["core"][r]) if "core" in mcols else -1
            mts.append(MtRecord(int(mcols["cpu"][r]), None if core < 0 else core,
                                R.TYPE_CODES.get(str(mcols["class"][r])) if "class" in mcols else None,
                                *[None if pd.isna(v) else float(v) for v in vals]))
        parts: dict[tuple[str, int], Partition] = {}
        dt = (t - prev) / 1e9 if prev is not None else interval_s
        for r in part_by.get(t, ()):
            name, cls = str(pcols["lpar"][r]), str(pcols["class"][r])
            p = parts.setdefault((name, int(pcols["lpar_number"][r])), Partition(name, int(pcols["lpar_number"][r])))
            busy = float(pcols["busy_pct"][r])
            cum[(name, cls)] = cum.get((name, cls), 0.0) + (0.0 if busy != busy else busy) / 100 * dt * 1e6
            for _ in range(int(pcols["cpus"][r])):
                p.cpus.append(PartitionCpu(len(p.cpus), cls.upper(), int(pcols["weight"][r]),
                                           int(round(cum[(name, cls)])), 0, bool(pcols["capped"][r])))
        w.sample_interval(pd.Timestamp(t), counters=counters, mt_counters=mtc, mt=mts,
                          partitions=list(parts.values()))
        prev = t
    data = w.to_bytes()
    if path is not None:
        out = _with_rdw(data) if rdw else data
        Path(path).write_bytes(_gzip.compress(out, mtime=0) if gzip else out)
    return data
