"""The extract's process-wide memory settings (issue 24), in a child process of its own (they last):

* no transparent huge pages once an extract has run (Linux: ``THP_enabled: 0`` in /proc/self/status; Arrow's
  default pool, which the Parquet writer's encoders use whatever pool the writer is given, had its arenas backed
  with 2 MiB pages);
* the columns the extract keeps for its reads after the engine's step (``store._LIGHT``) are those
  ``app.engine.timezone.record_offsets`` and ``app.dataset.dedup.settle_rows`` read: the two give the same
  result from frames of only those columns as from the whole samples frame.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "resources" / "samples" / "after_z16_ZOSA_smf113.rdw.gz"

_CHILD = """
import sys
sys.path.insert(0, {root!r})
from app.dataset import Dataset

def thp():
    with open("/proc/self/status", encoding="ascii") as fh:
        return next((line.split()[1] for line in fh if line.startswith("THP_enabled")), "?")

print(thp())
Dataset({out!r}, create=True).extract({sample!r})
print(thp())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a Linux process setting")
def test_no_transparent_huge_pages_after_an_extract(tmp_path):
    before = "?"
    with open("/proc/self/status", encoding="ascii") as fh:
        before = next((line.split()[1] for line in fh if line.startswith("THP_enabled")), "?")
    if before == "?":
        pytest.skip("this kernel does not report THP_enabled")
    code = _CHILD.format(root=str(ROOT), out=str(tmp_path / "ds"), sample=str(SAMPLE))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=str(ROOT))
    first, after = out.stdout.split()[-2:]
    assert after == "0"
    assert first in ("0", "1")          # (whatever the process inherited before)


def test_the_light_columns_give_the_same_offsets_and_first_times():
    from app.dataset import dedup
    from app.dataset.store import _LIGHT
    from app.engine.timezone import record_offsets
    from app.formats import read_file

    s = read_file(SAMPLE).samples
    light = s[[c for c in s.columns if c in _LIGHT]]
    assert len(light.columns) == 9 and len(s.columns) > 30
    pd.testing.assert_frame_equal(record_offsets([light]), record_offsets([s]))
    got, want = dedup.first_times([light[dedup.INTERVAL_KEY + ["time"]]]), dedup.first_times([s])
    pd.testing.assert_frame_equal(got, want)
    assert len(want) > 0 and np.isfinite(record_offsets([s])["offset_s"].to_numpy(dtype=float)).all()
