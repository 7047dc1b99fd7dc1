"""``dataset check`` / ``compact`` count every table's part files (issue 24 audit).

Found by the audit: a dataset with z/VM partition data said "20 part files read" when check had read 21 (the
``partitions`` table's part was read and CRC-checked, but left out of the count), and compact's "part files
N -> M" left that table out too, although compact merges its parts.
"""

from __future__ import annotations

import re

from _fleet_helpers import SAMPLES
from app.dataset import Dataset


def test_check_and_compact_count_the_partitions_table_too(tmp_path, capsys, monkeypatch):
    from app.cli import main

    monkeypatch.setenv("NESTSCOPE_CACHE", "0")
    zvm = SAMPLES[0]
    assert zvm.name == "after_VMSYS1_monwrite.mondata.gz"   # one z/VM day (2026-11-02) with partition data
    ds = Dataset(tmp_path / "ds", create=True)
    assert ds.extract(zvm).status == "added"
    on_disk = {t: sorted((ds.root / t).rglob("*.parquet")) for t in ("samples", "intervals", "partitions")}
    # by hand: one CEC, one month -> one part per table
    assert [len(v) for v in on_disk.values()] == [1, 1, 1]
    capsys.readouterr()
    assert main(["dataset", "check", str(ds.root)]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert re.search(r"1 manifest entries, 3 part files read; 0 problem", line), line
    assert main(["dataset", "compact", str(ds.root)]) == 0
    line = capsys.readouterr().out.strip().splitlines()[-1]
    assert "part files 3 -> 3" in line, line
