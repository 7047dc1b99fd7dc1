"""The bundled sample set, and bigger sets on demand.

One z16 (3931-A01, serial 123F5) with three z/OS LPARs (GCP + zIIP, ZOSC with
SMT-2 zIIPs under PROCVIEW CORE) over two days at 15-minute intervals, each
LPAR's SMF 113 in a different framing; the same LPARs on the z15 they ran on
before ("before" of a before/after comparison); a z/VM LPAR with SMT-2 IFLs on
the same z16 over one day at one-minute intervals, whose partition data lists
every LPAR of the box; and a few small broken files for the error paths.
"""

from __future__ import annotations

import datetime as dt
import gzip as _gzip
from pathlib import Path

import numpy as np
import pandas as pd

from app.formats import monwrite_writer, smf113_writer
from app.sample.model import CecModel, ClassModel, LparModel, make_samples, to_absolute

Z16_SEQ = "00000000000123F5"
Z15_SEQ = "0000000000045A12"
AFTER_START = dt.datetime(2026, 11, 2)
BEFORE_START = dt.datetime(2026, 10, 5)
ZVM_START = dt.datetime(2026, 11, 2)

MIX_GCP = {"L2P": 78.0, "L3P": 14.0, "L4LP": 4.5, "L4RP": 1.0, "MEMP": 2.5}
MIX_ZIIP = {"L2P": 83.0, "L3P": 11.0, "L4LP": 3.5, "L4RP": 0.5, "MEMP": 2.0}
MIX_IFL = {"L2P": 80.0, "L3P": 13.0, "L4LP": 4.0, "L4RP": 1.0, "MEMP": 2.0}
# ZOSB's change: its GCP weight is raised at 14:00 on the first day of the z16 data (300 -> 450), HiperDispatch gives
# it vertical-high CPs, and its L1 misses are sourced closer from then on (RNI, Est Finite CPI and CPI step down)
ZOSB_CHANGE_AT = dt.datetime(2026, 11, 2, 14, 0)
ZOSB_MIX_AFTER = {"L2P": 84.0, "L3P": 11.5, "L4LP": 3.0, "L4RP": 0.3, "MEMP": 1.2}
ZOSB_WEIGHT = (300, 450)


def zos_lpars(cpi_scale: float = 1.0, l1mp_scale: float = 1.0, crypto_lpar: str = "ZOSA") -> list[LparModel]:
    """The three z/OS LPARs of the sample CEC (also used for the z15 'before')."""
    return [
        # the batch LPAR: online by day, a busy batch window at night with a different L1MP / sourcing mix
        LparModel("ZOSA", "ZOSA", [ClassModel("GCP", 8, 78, 3.4 * cpi_scale, 3.6 * l1mp_scale, MIX_GCP, 62,
                                              batch_busy=88, batch_l1mp=1.35),
                                   ClassModel("zIIP", 4, 45, 2.6 * cpi_scale, 2.4 * l1mp_scale, MIX_ZIIP, 85,
                                              batch_busy=60, batch_l1mp=1.2)],
                  crypto=crypto_lpar == "ZOSA", batch=True),
        LparModel("ZOSB", "ZOSB", [ClassModel("GCP", 6, 65, 2.9 * cpi_scale, 2.8 * l1mp_scale, MIX_GCP, 55),
                                   ClassModel("zIIP", 2, 30, 2.4 * cpi_scale, 2.1 * l1mp_scale, MIX_ZIIP, 80)],
                  night=0.5, change_at=ZOSB_CHANGE_AT, change_mix=ZOSB_MIX_AFTER),
        LparModel("ZOSC", "ZOSC", [ClassModel("GCP", 4, 55, 3.1 * cpi_scale, 3.2 * l1mp_scale, MIX_GCP, 58),
                                   ClassModel("zIIP", 8, 40, 3.0 * cpi_scale, 2.6 * l1mp_scale, MIX_ZIIP, 88,
                                              smt=True, thread_density=1.35)],
                  night=0.25),
    ]


def zvm_lpar() -> LparModel:
    return LparModel("VMPROD", "VMSYS1", [ClassModel("IFL", 4, 60, 2.2, 2.2, MIX_IFL, 70, smt=True,
                                                     thread_density=1.4)], os="z/VM", night=0.4)


def _smf(samples: pd.DataFrame, subtypes: tuple[int, ...], stated: bool = False) -> list[bytes]:
    recs: list[bytes] = []
    if 2 in subtypes:
        recs += smf113_writer.encode_samples(to_absolute(samples), 2)
    if 1 in subtypes:
        recs += smf113_writer.encode_samples(with_stated_interval(samples) if stated else samples, 1)
    return recs


def with_stated_interval(samples: pd.DataFrame) -> pd.DataFrame:
    """Add the identification section's interval (smf113.md 5): from the CPU's previous record time (or the run
    start for its first record) to this record's time."""
    s = samples.sort_values("time", kind="stable")
    prev = s.groupby(["system", "class", "cpu"], observed=True, sort=False)["time"].shift(1)
    out = samples.copy()
    out["rec_start"] = prev.fillna(s["run_start"]).reindex(samples.index)
    out["rec_end"] = out["time"]
    return out


def _order_by_time(recs: list[bytes]) -> list[bytes]:
    # SMF data sets hold records in the order they were written: CTM at data-section offset 8.
    def ctm(r: bytes) -> int:
        dof = int.from_bytes(r[44:48], "big")
        return int.from_bytes(r[dof + 8:dof + 16], "big")
    return sorted(recs, key=ctm)


def write_zos(out: Path, cec: CecModel, start: dt.datetime, intervals: int, tag: str,
              plan: dict[str, tuple[tuple[int, ...], str]], seed: int, stated: bool = False) -> list[Path]:
    """``stated``: subtype 1 records carry the identification section with the interval start and end."""
    samples, _ = make_samples(cec, start, intervals, 900.0, seed=seed)
    paths = []
    for system, (subtypes, framing) in plan.items():
        recs = _order_by_time(_smf(samples[samples["system"] == system], subtypes, stated))
        p = out / f"{tag}_{system}_smf113.{framing}.gz"
        smf113_writer.write_smf_file(p, recs, framing=framing, gzip=True)
        paths.append(p)
    return paths


def _zvm_mt(samples: pd.DataFrame, rng: np.random.Generator) -> pd.DataFrame:
    """D0R2 MT values as z/VM reports them, consistent with the counters."""
    t0 = samples[(samples["cpu"] % 2) == 0]
    m448, m449 = t0["M448"].to_numpy(np.float64), t0["M449"].to_numpy(np.float64)
    active = m448 + m449
    td = (m448 + 2 * m449) / active
    core_busy = active / (t0["cpu_speed"].to_numpy(np.float64) * 1e6 * 60.0) * 100
    mcf = np.full(len(t0), 1.32) * rng.normal(1.0, 0.01, len(t0))
    cf = 1 + (mcf - 1) * (td - 1)                # more two-thread time -> more of the MT gain realised
    prod = cf / mcf
    rows = []
    for thread in (0, 1):
        rows.append(pd.DataFrame({
            "time": t0["time"].to_numpy(), "system": t0["system"].to_numpy(),
            "cpu": t0["cpu"].to_numpy() + thread, "core": t0["core"].to_numpy(), "class": "IFL",
            "core_busy_pct": core_busy, "thread_density": td, "thread_density_type": np.nan,
            "productivity": prod * 100, "mt_util_pct": core_busy * prod,
            "capacity_factor": cf * 100, "max_capacity_factor": mcf * 100}))
    mt = pd.concat(rows, ignore_index=True)
    mt["thread_density_type"] = mt.groupby("time")["thread_density"].transform("mean")
    return mt.sort_values(["time", "cpu"]).reset_index(drop=True)


def _partitions(times: np.ndarray, lpars: list[LparModel], zvm: LparModel, cec: str,
                rng: np.random.Generator) -> pd.DataFrame:
    from app.sample.model import _day_factor, batch_weight

    rows = []
    table = [(lp.name, i + 1, lp) for i, lp in enumerate(lpars)] + [(zvm.name, 4, zvm)]
    weights = {"GCP": 300, "zIIP": 200, "IFL": 500, "ICF": 0}
    for name, num, lp in table:
        for cm in lp.classes:
            cls = "CP" if cm.cls == "GCP" else cm.cls
            busy = cm.busy * _day_factor(times, lp.night)
            if lp.batch and cm.batch_busy is not None:
                b = batch_weight(times)
                busy = busy * (1 - b) + cm.batch_busy * b
            busy = busy * rng.normal(1.0, 0.03, len(times))
            cpus = cm.cpus // 2 if cm.smt else cm.cpus
            weight = np.full(len(times), weights.get(cm.cls, 100))
            if name == "ZOSB" and cm.cls == "GCP":   # the weight raise of ZOSB's change
                weight = np.where(times >= np.datetime64(ZOSB_CHANGE_AT), ZOSB_WEIGHT[1], ZOSB_WEIGHT[0])
            rows.append(pd.DataFrame({"cec": cec, "lpar": name, "lpar_number": num, "class": cls, "cpus": cpus,
                                      "weight": weight, "capped": False,
                                      "busy_pct": np.clip(busy, 0, 100), "time": times}))
    extra = [("ZOSD", 5, "CP", 2, 100, True, 12.0), ("CF01", 6, "ICF", 2, 0, False, 35.0)]
    for name, num, cls, cpus, w, capped, busy in extra:
        rows.append(pd.DataFrame({"cec": cec, "lpar": name, "lpar_number": num, "class": cls, "cpus": cpus,
                                  "weight": w, "capped": capped,
                                  "busy_pct": np.clip(busy * rng.normal(1, 0.05, len(times)), 0, 100),
                                  "time": times}))
    return pd.concat(rows, ignore_index=True)


def write_zvm(out: Path, intervals: int = 1440, seed: int = 5, name: str = "after_VMSYS1_monwrite.mondata.gz",
              gzip: bool = True, zone: str | None = None) -> Path:
    """``zone``: the z/VM system's IANA zone; D1R4 states its UTC offset at the start of the data (0 = UTC)."""
    rng = np.random.default_rng(seed)
    cec = CecModel("z16", Z16_SEQ, [zvm_lpar()])
    samples, _ = make_samples(cec, ZVM_START, intervals, 60.0, seed=seed)
    mt = _zvm_mt(samples, rng)
    times = np.sort(samples["time"].unique())
    parts = _partitions(times, zos_lpars(), zvm_lpar(), cec.cec, rng)
    absolute = to_absolute(samples)
    p = out / name
    zone_s = 0
    if zone:
        t0 = pd.Timestamp(ZVM_START).tz_localize("UTC")
        zone_s = int(t0.tz_convert(zone).utcoffset().total_seconds())
    monwrite_writer.write_samples(absolute, parts, mt, path=p, gzip=gzip, interval_s=60.0, zone_offset_s=zone_s)
    return p


def _ascii_transfer(recs: list[bytes]) -> bytes:
    """What FTP in ASCII mode makes of SMF records: RDWs dropped, every byte translated
    EBCDIC -> ASCII (code page 037 -> Latin-1) and CR LF inserted at each record end."""
    table = bytes(range(256)).decode("cp037").encode("latin-1", errors="replace")
    return b"".join(r[4:].translate(table) + b"\r\n" for r in recs)


def write_broken(out: Path, good_smf: bytes) -> list[Path]:
    """Small broken files, one per error path an analyst meets."""
    out.mkdir(parents=True, exist_ok=True)
    recs = []
    pos = 0
    while pos + 4 <= len(good_smf) and len(recs) < 40:
        n = int.from_bytes(good_smf[pos:pos + 2], "big")
        recs.append(good_smf[pos:pos + n])
        pos += n
    files = {
        "truncated_smf113.rdw": b"".join(recs[:20])[:-777],
        "corrupt_length_smf113.rdw": b"".join(recs[:10]) + b"\x7f\xff\x00\x00" + recs[10][4:] + b"".join(recs[11:20]),
        "ascii_transfer_smf113.txt": _ascii_transfer(recs[:5]),
        "rdw_stripped_smf113.bin": b"".join(r[4:] for r in recs[:10]),
        "empty.smf": b"",
        "notes_not_smf.txt": b"LPAR capacity notes\r\nZOSA 8 GCP 4 zIIP\r\n",
        "report.pdf": b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n",
    }
    paths = []
    for name, data in files.items():
        p = out / name
        p.write_bytes(data)
        paths.append(p)
    mon = write_zvm(out, intervals=5, name="truncated_monwrite.mondata", gzip=False)
    data = mon.read_bytes()
    mon.write_bytes(data[: len(data) - 4096 - 1234])
    paths.append(mon)
    return paths


def write_sample_set(out: str | Path, days: int = 2, zvm_intervals: int = 1440) -> list[Path]:
    """Write the bundled sample set to ``out``; returns the files written."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    intervals = days * 96
    after = CecModel("z16", Z16_SEQ, zos_lpars())
    before = CecModel("z15", Z15_SEQ, zos_lpars(cpi_scale=1.12, l1mp_scale=1.05))
    paths = write_zos(out, after, AFTER_START, intervals, "after_z16",
                      {"ZOSA": ((1, 2), "rdw"), "ZOSB": ((2,), "vbs"), "ZOSC": ((1,), "bdw")}, seed=11, stated=True)
    paths += write_zos(out, before, BEFORE_START, intervals, "before_z15",
                       {"ZOSA": ((1,), "rdw"), "ZOSB": ((1,), "rdw"), "ZOSC": ((1,), "rdw")}, seed=12)
    paths.append(write_zvm(out, zvm_intervals))
    good = _gzip.decompress(paths[0].read_bytes())
    paths += write_broken(out / "broken", good)
    return paths
