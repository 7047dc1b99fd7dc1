"""A workload model that turns analyst-level numbers into CPU MF counters.

An analyst describes each LPAR the way a CPU MF presentation does: processor
classes with CPU counts and busy, CPI, L1MP, where L1 misses are sourced from,
the problem-state share and the finite-cache part of CPI.  ``make_samples``
produces the counter values a real HIS run or z/VM monitor would have counted
for that workload, interval by interval, with noise and a day/night cycle, in
the counter-sample frame shape of ``app.formats.schema``.  The writers then
encode them byte for byte, and the engine must give the model's numbers back.

The story the model tells (what an analyst sees in the bundled sample):

* **Online day, batch night.**  An LPAR with ``batch`` runs a batch window from about 00:00 to 06:00 UTC
  (its local time when the LPAR has a ``zone``, as the day's cycle; ramps of an hour): its busy rises to the
  class's ``batch_busy`` instead of the night low, L1MP is
  ``batch_l1mp`` times the day's, and L1 misses go further out (``BATCH_MIX``: more L3/L4/memory, so a
  higher RNI), with more problem state and more TLB misses.
* **A change.**  ``change_at`` / ``change_mix`` on an LPAR: from that moment its L1 misses are sourced
  closer (e.g. a weight raise that gives the LPAR vertical-high CPs under HiperDispatch): L2P/L3P up,
  remote L4 and memory down, so RNI, Est Finite CPI and CPI step down while L1MP stays.
* **Independent components.**  CPI is built from its parts: the instruction-complexity part varies on its own
  (noise, batch code), the finite-cache part is L1MP x sourcing cycles per miss, where the cycles per miss
  follow the sourcing mix (a nest-intensity weighting).  Est Finite CPI / CPI therefore moves with the
  mix and L1MP; TLB miss cycles, TLB misses per instruction and PTE writes vary with noise and batch.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from app.formats.common import cec_id, normalize_serial
from app.formats.schema import (SET_BASIC, SET_CRYPTO, SET_EXTENDED, SET_MT, SET_PROBLEM, counter_number,
                                is_counter_column, set_size)
from app.sample.generations import GENERATIONS, GENERIC_TO_Z10, GenerationLayout

LEVELS = ("L2P", "L3P", "L4LP", "L4RP", "MEMP")
D_SHARE = 0.7          # share of sourced L1 misses counted on the data side
B2_SHARE = 0.3         # share of L1 misses that are instruction-cache misses
PENALTY_OVER_E143 = 1.25   # (B3+B5) / E143 on z13+, so the TLB rescale factor is 0.8
SMF_CLASS_CODE = {"GCP": 0, "zAAP": 2, "zCBP": 2, "zIIP": 4}
ZVM_CLASS_CODE = {"CP": 0, "zAAP": 2, "IFL": 3, "ICF": 4, "zIIP": 5}


@dataclass
class ClassModel:
    """One processor class of an LPAR."""

    cls: str
    cpus: int                 # logical CPUs (threads when smt)
    busy: float               # % busy of each CPU at the daily peak
    cpi: float
    l1mp: float
    mix: dict[str, float]     # % of L1 misses from L2P, L3P, L4LP, L4RP, MEMP (sums to 100)
    prb_state: float = 60.0   # % of instructions in problem state
    finite_share: float = 0.4  # Est Finite CPI / CPI at the day's sourcing mix and L1MP
    tlb_pct: float = 4.0      # % of cycles with a TLB miss in progress (before rescaling)
    smt: bool = False         # two threads per core, MT-diagnostic set on thread 0
    thread_density: float = 1.3
    batch_busy: float | None = None  # % busy of each CPU in the batch window (None: the night low)
    batch_l1mp: float = 1.3   # L1MP in the batch window relative to the day


# where batch L1 misses are sourced (sequential work over large data: further out than online work)
BATCH_MIX = {"L2P": 66.0, "L3P": 19.0, "L4LP": 8.0, "L4RP": 2.0, "MEMP": 5.0}
# nest-intensity weights of the model's sourcing cycles per L1 miss (relative; any positive weights would do)
NEST_WEIGHTS = {"L2P": 0.1, "L3P": 0.4, "L4LP": 1.0, "L4RP": 2.4, "MEMP": 7.5}
BATCH_START_H, BATCH_END_H = 0.0, 6.0   # UTC hours of the batch window (one-hour ramps around them)


@dataclass
class LparModel:
    name: str
    system: str
    classes: list[ClassModel]
    os: str = "z/OS"
    crypto: bool = False
    night: float = 0.35       # busy at night relative to the peak
    batch: bool = False       # runs a batch window at night (see the module docstring)
    change_at: dt.datetime | None = None         # a visible change from this moment on (naive UTC)
    change_mix: dict[str, float] | None = None   # the sourcing mix after the change (all classes)
    zone: str | None = None   # IANA time zone of the system (e.g. 'Europe/Berlin'): records carry its local time
    tme_lag_s: float = 0.0    # SMF TME: seconds after the interval end the record enters the SMF buffer


@dataclass
class CecModel:
    generation: str
    seqcode: str
    lpars: list[LparModel] = field(default_factory=list)

    @property
    def layout(self) -> GenerationLayout:
        return GENERATIONS[self.generation]

    @property
    def cec(self) -> str:
        return cec_id(self.layout.machine_type, self.seqcode)


def _day_factor(times: np.ndarray, night: float) -> np.ndarray:
    hours = (times.astype("datetime64[m]").astype(np.int64) % 1440) / 60.0
    day = 0.5 - 0.5 * np.cos(2 * np.pi * (hours - 3.0) / 24.0)   # 0 at 03:00, 1 at 15:00
    return night + (1 - night) * day


def batch_weight(times: np.ndarray) -> np.ndarray:
    """0..1 per interval end: 1 inside the batch window, ramping over an hour centred on each end."""
    hours = (times.astype("datetime64[m]").astype(np.int64) % 1440) / 60.0
    u = (hours - BATCH_START_H + 0.5) % 24          # 0 half an hour before the window opens
    length = (BATCH_END_H - BATCH_START_H) % 24
    return np.clip(np.minimum(u, length + 1 - u), 0, 1)


def _nest(mix: dict[str, np.ndarray]) -> np.ndarray:
    return sum(NEST_WEIGHTS[k] * mix[k] for k in LEVELS) / 100


def _rni_z196(pct: dict[str, np.ndarray]) -> np.ndarray:
    # z196 seed formula (metrics.md 3.2) - needed to record penalty cycles the way z196 does.
    return 1.6 * (0.4 * pct["L3P"] + 1.0 * pct["L4LP"] + 2.4 * pct["L4RP"] + 7.5 * pct["MEMP"]) / 100


def _class_block(lay: GenerationLayout, lpar: LparModel, cm: ClassModel, times: np.ndarray,
                 interval_s: float, rng: np.random.Generator) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """Counters (name -> array[n_int, cpus]) and the model's own metric values."""
    n, c = len(times), cm.cpus
    noise = lambda s: rng.normal(1.0, s, (n, c))  # noqa: E731
    clock = local_times(times, lpar.zone) if lpar.zone else times     # the day and the batch follow local time
    b = (batch_weight(clock) if lpar.batch else np.zeros(n))[:, None]
    after = np.zeros((n, 1))
    if lpar.change_at is not None and lpar.change_mix is not None:
        after = (times >= np.datetime64(lpar.change_at.replace(tzinfo=None), "ns")).astype(float)[:, None]
    day_busy = cm.busy * _day_factor(clock, lpar.night)[:, None]
    busy_target = day_busy if cm.batch_busy is None else day_busy * (1 - b) + cm.batch_busy * b
    busy = np.clip(busy_target * noise(0.04), 0.5, 100.0)
    cycles_avail = lay.cpu_speed * 1e6 * interval_s
    b0 = np.rint(busy / 100 * cycles_avail)
    # sourcing mix: the day's, the batch window's, and after a change the new one
    base_mix = {k: np.full((n, 1), cm.mix[k]) for k in LEVELS}
    if lpar.change_mix is not None:
        base_mix = {k: cm.mix[k] * (1 - after) + lpar.change_mix[k] * after for k in LEVELS}
    mix = {k: (base_mix[k] * (1 - b) + BATCH_MIX[k] * b) * noise(0.03) for k in LEVELS}
    tot = sum(mix.values())
    pct = {k: v / tot * 100 for k, v in mix.items()}
    # CPI from its parts: instruction complexity (own noise, batch code a little simpler) + L1MP x cycles per miss
    l1mp = cm.l1mp * (1 + (cm.batch_l1mp - 1) * b) * noise(0.03)
    day_nest = _nest({k: np.full(1, cm.mix[k]) for k in LEVELS})
    scpl1m = (cm.finite_share * cm.cpi * 100 / cm.l1mp) * _nest(pct) / day_nest
    fin_target = l1mp / 100 * scpl1m
    cmplx = cm.cpi * (1 - cm.finite_share) * (1 - 0.08 * b) * noise(0.015)
    cpi = cmplx + fin_target
    b1 = np.rint(b0 / cpi)
    misses = np.rint(b1 * l1mp / 100)
    ctr: dict[str, np.ndarray] = {"B0": b0, "B1": b1}
    ctr["B2"] = np.rint(misses * B2_SHARE)
    ctr["B4"] = misses - ctr["B2"]
    names = {k: (GENERIC_TO_Z10[k] if lay.name == "z10" else k) for k in LEVELS}
    counts = {k: np.floor(misses * pct[k] / 100) for k in LEVELS}
    counts["MEMP"] = misses - sum(counts[k] for k in LEVELS if k != "MEMP")
    for k in LEVELS:
        d_ctr, i_ctr = lay.sourcing[names[k]][:2]
        d = np.floor(counts[k] * D_SHARE)
        ctr[f"E{d_ctr}"] = ctr.get(f"E{d_ctr}", 0) + d
        ctr[f"E{i_ctr}"] = ctr.get(f"E{i_ctr}", 0) + counts[k] - d
    fin = fin_target
    if lay.finite == "e143":
        ctr["E143"] = np.rint(fin * b1)
        penalty = np.rint(ctr["E143"] * PENALTY_OVER_E143)
    elif lay.finite == "penalty-0.84":
        penalty = np.rint(fin * b1 / 0.84)
    elif lay.finite == "penalty-rni":
        penalty = np.rint(fin * b1 / (0.57 + 0.1 * _rni_z196(pct)))
    else:
        penalty = np.rint(fin * b1)
    ctr["B3"] = np.rint(penalty * 0.3)
    ctr["B5"] = penalty - ctr["B3"]
    # TLB: misses per instruction, cycles per miss and PTE share vary on their own (noise, batch: bigger data)
    tlb_writes = np.rint(b1 * 0.004 * (1 + 0.35 * b) * noise(0.06))
    dw = np.rint(tlb_writes * 0.6)
    ctr[f"E{lay.tlb_writes[0]}"], ctr[f"E{lay.tlb_writes[1]}"] = dw, tlb_writes - dw
    miss_cycles = np.rint(b0 * cm.tlb_pct * (1 + 0.5 * b) / 100 * noise(0.05))
    dm = np.rint(miss_cycles * 0.7)
    ctr[f"E{lay.tlb_miss_cycles[0]}"], ctr[f"E{lay.tlb_miss_cycles[1]}"] = dm, miss_cycles - dm
    ctr[f"E{lay.pte_writes}"] = np.rint(tlb_writes * np.clip(0.1 * (1 + 0.4 * b) * noise(0.08), 0, 1))
    prb = np.clip((cm.prb_state + (92 - cm.prb_state) * 0.6 * b) * noise(0.02), 0, 100)
    ctr["P33"] = np.rint(b1 * prb / 100)
    ctr["P32"] = np.rint(b0 * prb / 100)
    if lay.cfvn == 1:
        for src, dst in (("B2", "P34"), ("B3", "P35"), ("B4", "P36"), ("B5", "P37")):
            ctr[dst] = np.rint(ctr[src] * prb / 100)
    if lpar.crypto:
        for k in range(64, 64 + set_size(SET_CRYPTO, lay.cfvn, lay.csvn)):
            ctr[f"K{k}"] = np.rint(b1 * 1e-5 * rng.uniform(0.5, 1.5, (n, c))) if k < 72 else np.zeros((n, c))
    expected = {"LPARCPU": busy, "CPI": b0 / b1, "L1MP": misses / b1 * 100, "PRBSTATE": ctr["P33"] / b1 * 100,
                "Est_Finite_CPI": fin}
    for k in LEVELS:
        expected[names[k]] = expected.get(names[k], 0) + counts[k] / misses * 100
    if cm.smt:
        td = np.clip(cm.thread_density * rng.normal(1.0, 0.02, (n, c // 2)), 1.0, 2.0)
        core_active = (b0[:, 0::2] + b0[:, 1::2]) / td
        m449 = np.zeros((n, c))
        m448 = np.zeros((n, c))
        m449[:, 0::2] = np.rint((td - 1) * core_active)
        m448[:, 0::2] = np.rint(core_active) - m449[:, 0::2]
        ctr["M448"], ctr["M449"] = m448, m449
        for k in range(450, 448 + set_size(SET_MT, lay.cfvn, lay.csvn)):
            ctr[f"M{k}"] = np.zeros((n, c))       # the other MT-diagnostic counters are recorded too
        td_full = np.full((n, c), np.nan)
        td_full[:, 0::2] = (m448[:, 0::2] + 2 * m449[:, 0::2]) / (m448[:, 0::2] + m449[:, 0::2])
        expected["Thread_Density"] = td_full
    return ctr, expected


def make_samples(cec: CecModel, start: dt.datetime, intervals: int, interval_s: float = 900.0,
                 seed: int = 1) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Counter deltas for every CPU and interval, and the model's metric values.

    Returns ``(samples, expected)``: ``samples`` is a counter-sample frame with
    ``kind='delta'``; ``expected`` has one row per CPU and interval with the
    model's LPARCPU, CPI, L1MP, PRBSTATE, sourcing percentages, Est_Finite_CPI
    and (SMT thread 0) Thread_Density.
    """
    lay = cec.layout
    rng = np.random.default_rng(seed)
    t0 = np.datetime64(start.replace(tzinfo=None), "ns")
    step = np.timedelta64(int(interval_s * 1e9), "ns")
    times = t0 + step * np.arange(1, intervals + 1)
    frames, exp_frames = [], []
    for lpar in cec.lpars:
        next_cpu = 0
        for cm in lpar.classes:
            ctr, expected = _class_block(lay, lpar, cm, times, interval_s, rng)
            smt_lpar = any(x.smt for x in lpar.classes)
            if smt_lpar and not cm.smt:
                cpus = np.arange(cm.cpus) * 2 + next_cpu
                next_cpu = int(cpus[-1]) + 2
            else:
                cpus = np.arange(cm.cpus) + next_cpu
                next_cpu = int(cpus[-1]) + 1
                if smt_lpar and next_cpu % 2:
                    next_cpu += 1
            cores = cpus // 2 if smt_lpar else cpus
            n, c = len(times), cm.cpus
            ident = {
                "cpu": np.tile(cpus, n), "core": np.tile(cores, n),
                "time": np.repeat(times, c),
            }
            sets = SET_BASIC | SET_PROBLEM | SET_EXTENDED | (SET_CRYPTO if lpar.crypto else 0)
            sets_arr = np.full(n * c, sets, dtype=np.int32)
            if cm.smt:
                sets_arr[np.tile(np.arange(c) % 2 == 0, n)] |= SET_MT
            df = pd.DataFrame({k: v.reshape(-1).astype(np.uint64) if isinstance(v, np.ndarray)
                               else np.zeros(n * c, np.uint64) for k, v in ctr.items()})
            df = df.assign(**ident, sets=sets_arr, lpar=lpar.name, system=lpar.system, os=lpar.os,
                           **{"class": cm.cls})
            frames.append(df)
            e = pd.DataFrame({k: np.asarray(v).reshape(-1) for k, v in expected.items()})
            exp_frames.append(e.assign(system=lpar.system, lpar=lpar.name, cpu=ident["cpu"], time=ident["time"],
                                       **{"class": cm.cls}))
    samples = pd.concat(frames, ignore_index=True)
    samples = _finish_identity(samples, cec, t0)
    zoned = [lp for lp in cec.lpars if lp.zone]
    if zoned:                  # records state the local time of their system (SMF TME/DTE, z/VM D1R4 zone)
        loc = np.full(len(samples), np.datetime64("NaT"), "datetime64[ns]")
        for lp in zoned:
            rows = (samples["system"] == lp.system).to_numpy()
            loc[rows] = local_times(samples["time"].to_numpy("datetime64[ns]")[rows], lp.zone, lp.tme_lag_s)
        samples["local_time"] = loc
    expected = pd.concat(exp_frames, ignore_index=True)
    return samples, expected


def local_times(utc: np.ndarray, zone: str, lag_s: float = 0.0) -> np.ndarray:
    """Naive UTC times -> the naive local wall time in ``zone`` (zoneinfo) ``lag_s`` seconds later."""
    t = pd.DatetimeIndex(utc) + pd.Timedelta(seconds=lag_s)
    return t.tz_localize("UTC").tz_convert(zone).tz_localize(None).to_numpy("datetime64[ns]")


def _finish_identity(df: pd.DataFrame, cec: CecModel, run_start: np.datetime64) -> pd.DataFrame:
    lay = cec.layout
    counters = sorted((c for c in df.columns if is_counter_column(c)), key=counter_number)
    for c in counters:
        df[c] = df[c].fillna(0).astype(np.uint64)
    codes = ZVM_CLASS_CODE if (df["os"] == "z/VM").any() else SMF_CLASS_CODE
    ident = pd.DataFrame({
        "source": "", "offset": 0, "cec": cec.cec, "machine_type": lay.machine_type, "model": lay.model,
        "serial": normalize_serial(cec.seqcode), "seqcode": cec.seqcode,
        "lpar": df["lpar"], "system": df["system"], "os": df["os"], "class": df["class"],
        "cls_code": df["class"].map(codes).fillna(0).astype(np.int32),
        "cpu": df["cpu"].astype(np.int32), "core": df["core"].astype(np.int32),
        "run_start": run_start, "time": df["time"], "cpu_speed": lay.cpu_speed,
        "cfvn": lay.cfvn, "csvn": lay.csvn, "flags": 0, "lost": False, "mt_lost": False, "first": False,
        "kind": "delta", "sets": df["sets"].astype(np.int32),
    })
    out = pd.concat([ident, df[counters]], axis=1)
    return out.sort_values(["system", "time", "cpu"], kind="stable").reset_index(drop=True)


def to_absolute(samples: pd.DataFrame, seed: int = 7) -> pd.DataFrame:
    """Running totals (subtype 2 / z/VM style) with a baseline row per CPU.

    Each CPU starts from an arbitrary counter state (as after hours of running);
    the baseline row is stamped at the run start and flagged ``first``.
    """
    rng = np.random.default_rng(seed)
    counters = [c for c in samples.columns if is_counter_column(c)]
    df = samples.sort_values(["system", "class", "cpu", "time"], kind="stable").reset_index(drop=True)
    keys = ["system", "class", "cpu"]
    first_rows = df.groupby(keys, observed=True, sort=False).head(1).copy()
    start_vals = rng.integers(10**9, 10**12, size=(len(first_rows), len(counters)), dtype=np.uint64)
    start_vals[first_rows[counters].to_numpy() == 0] = 0      # counters never counted stay 0
    base = first_rows.copy()
    base[counters] = start_vals
    if "local_time" in base.columns:        # the baseline's local time: the same offset as the CPU's first row
        base["local_time"] = base["local_time"] - (base["time"] - base["run_start"])
    base["time"] = base["run_start"]
    base["first"] = True
    grp = df.groupby(keys, observed=True, sort=False)
    cum = grp[counters].cumsum().to_numpy(dtype=np.uint64)
    offsets = pd.DataFrame(start_vals, columns=counters, index=first_rows.index)
    offs = offsets.reindex(df.index).ffill().to_numpy(dtype=np.uint64) if len(df) else start_vals
    df[counters] = cum + offs
    out = pd.concat([base, df], ignore_index=True)
    out["kind"] = "absolute"
    return out.sort_values(["system", "time", "cpu"], kind="stable").reset_index(drop=True)
