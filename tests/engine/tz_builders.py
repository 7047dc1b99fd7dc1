"""Files of systems in a time zone, built with the sample writers (tests of local time)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from app.formats import monwrite_writer, read_file, smf113_writer
from app.sample.build import MIX_GCP, MIX_IFL
from app.sample.model import CecModel, ClassModel, LparModel, make_samples, to_absolute

DST_START = dt.datetime(2026, 3, 28)      # Berlin switches to CEST on Sunday 2026-03-29 at 01:00 UTC


def zos_samples(zone: str | None = "Europe/Berlin", lag_s: float = 0.37, days: int = 3, system: str = "ZOSA",
                start: dt.datetime = DST_START):
    """One z/OS LPAR (2 GCPs) at 15-minute intervals from ``start`` (interval ends 00:15 .. day ``days`` 00:00)."""
    lp = LparModel(system, system, [ClassModel("GCP", 2, 60, 3.0, 3.0, MIX_GCP)], zone=zone, tme_lag_s=lag_s)
    samples, _ = make_samples(CecModel("z16", "00000000000123F5", [lp]), start, days * 96, 900.0, seed=3)
    return samples


def write_zos(tmp: Path, samples, name: str = "zos.smf", subtype: int = 1, mangle=None) -> Path:
    recs = smf113_writer.encode_samples(samples if subtype == 1 else to_absolute(samples), subtype)
    if mangle is not None:
        recs = [mangle(r) for r in recs]
    p = tmp / name
    smf113_writer.write_smf_file(p, recs, framing="rdw")
    return p


def write_zvm(tmp: Path, zone_offset_s: int, intervals: int = 30, name: str = "vm.mondata") -> Path:
    lp = LparModel("VMPROD", "VMSYS1", [ClassModel("IFL", 2, 50, 2.2, 2.2, MIX_IFL)], os="z/VM")
    samples, _ = make_samples(CecModel("z16", "00000000000123F5", [lp]), DST_START, intervals, 60.0, seed=4)
    p = tmp / name
    monwrite_writer.write_samples(to_absolute(samples), path=p, zone_offset_s=zone_offset_s)
    return p


def read(path: Path):
    return read_file(str(path))


# A comparison of the Berlin system across its switch (2026-03-29 01:00 UTC): each side's window as asked (UTC) and
# as each zone shows it, by hand: CET = UTC+1 before the switch, CEST = UTC+2 from 01:00 UTC on; New York is on EDT
# (UTC-4) since 8 March. Shared by the comparison CSV/sheet and the compare table/JSON tests.
COMPARE_SIDES = ["--before-from", "2026-03-28T00:00Z", "--before-to", "2026-03-28T02:00Z",
                 "--after-from", "2026-03-29T00:00Z", "--after-to", "2026-03-29T02:00Z"]
COMPARE_LOCAL = {"before": ("2026-03-28T01:00:00+01:00", "2026-03-28T03:00:00+01:00"),
                 "after": ("2026-03-29T01:00:00+01:00", "2026-03-29T04:00:00+02:00")}
COMPARE_UTC = {"before": ("2026-03-28T00:00:00Z", "2026-03-28T02:00:00Z"),
               "after": ("2026-03-29T00:00:00Z", "2026-03-29T02:00:00Z")}
COMPARE_NEW_YORK = {"before": ("2026-03-27T20:00:00-04:00", "2026-03-27T22:00:00-04:00"),
                    "after": ("2026-03-28T20:00:00-04:00", "2026-03-28T22:00:00-04:00")}


def compare_deck(system_file: str, tmp: Path, *more: str) -> list:
    """The slides of a comparison deck of ``system_file`` against itself over :data:`COMPARE_SIDES` (the Berlin
    system: before on CET only, after across the switch); ``more`` other export arguments."""
    from pptx import Presentation

    from app.cli import main

    out = tmp / "c.pptx"
    assert main(["export", "--out", str(out), "--before", system_file, "--after", system_file, *COMPARE_SIDES,
                 *more]) == 0
    return list(Presentation(str(out)).slides)
