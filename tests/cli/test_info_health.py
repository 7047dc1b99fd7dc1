"""`nestscope info` shows the engine's data-health findings (issue 9) with file and byte offset."""

from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # tests/ for smf_builders
import smf_builders as B  # noqa: E402

from app.cli import main  # noqa: E402
from app.formats import smf113_writer as W  # noqa: E402

MIN15 = 900 * 4096 * 10**6          # 15 minutes in TOD units


def _st2(k: int, cpu: int, b0: int) -> bytes:
    """Subtype-2 record k (running totals) of CPU ``cpu`` with basic counter 0 = ``b0``."""
    return W.encode_subtype2(dict(system="SYSA", cpu=cpu, cls_code=0, cpu_speed=5200, machine_type="3931",
                                  model="A01", seqcode="0000000000012345", cfvn=3, csvn=7, run_start_tod=B.CTS,
                                  time_tod=B.CTM + k * MIN15, flags=0x8000 if k == 0 else 0x4000,
                                  counters={1: [b0, b0 // 2, b0 // 100, b0 // 3, b0 // 200, b0 // 5],
                                            2: [b0 // 10, b0 // 20]}))


def _reset_file(tmp_path: Path) -> tuple[Path, int]:
    """Two CPUs, five records each; CPU 1's counters go back to a small value in its last record."""
    recs, off, reset_at = [], 0, None
    for k in range(5):
        for cpu in (0, 1):
            b0 = (k + 1) * 10**9 if not (cpu == 1 and k == 4) else 10**6      # the reset
            r = _st2(k, cpu, b0)
            if cpu == 1 and k == 4:
                reset_at = off
            recs.append(r)
            off += len(r)
    p = tmp_path / "reset.smf"
    p.write_bytes(b"".join(recs))
    return p, reset_at


def test_info_shows_a_counter_reset_with_its_offset(tmp_path, capsys):
    p, reset_at = _reset_file(tmp_path)
    assert reset_at == 9 * 244               # the tenth record, each 244 bytes (spec 11.1 shape)
    assert main(["info", str(p)]) == 0
    text = capsys.readouterr().out
    assert f"offset {reset_at} (0x{reset_at:X})" in text and "went backwards" in text
    assert "(1 from the data-health checks)" in text
    assert main(["info", str(p), "--format", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)[0]
    # the keys info always had are still there
    assert {"file", "kind", "framing", "size", "records", "samples", "partitions", "time_range", "machines",
            "systems", "classes", "findings", "other_types"} <= set(doc)
    resets = [f for f in doc["findings"] if f["code"] == "counter-reset"]
    assert len(resets) == 1 and resets[0]["offset"] == reset_at and resets[0]["origin"] == "engine"
    # the reset is one finding: CPU 1 did not vanish (its record is there, it is a new baseline)
    assert not [f for f in doc["findings"] if f["code"] in ("cpu-vanished", "cpu-appeared")]


def test_info_lists_partition_only_lpars():
    root = Path(__file__).resolve().parents[2]
    import io
    from contextlib import redirect_stdout
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert main(["info", str(root / "resources/samples/after_VMSYS1_monwrite.mondata.gz"), "--format", "json"]) == 0
    doc = json.loads(buf.getvalue())[0]
    names = {p["lpar"]: p["counters"] for p in doc["partition_lpars"]}
    assert names["VMPROD"] is True and names["CF01"] is False and names["ZOSD"] is False
