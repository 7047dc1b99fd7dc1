"""Helpers shared by the dataset tests: compare a query result with report's frame."""

from __future__ import annotations

import shutil
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted((ROOT / "resources" / "samples").glob("*.gz"))
SMF = [s for s in SAMPLES if "smf113" in s.name]       # 3 x z16 (3931-123F5), 3 x z15 (8561-45A12)
IDENT = {"cpu": ["cec", "lpar", "system", "os", "class", "cpu"], "interval": ["cec", "lpar", "system", "os", "class"],
         "class": ["cec", "lpar", "system", "os", "class"], "lpar": ["cec", "lpar", "system", "os"], "cec": ["cec"]}


def _txt(s: pd.Series) -> np.ndarray:
    return np.array(["" if v is None or (isinstance(v, float) and np.isnan(v)) else str(v) for v in s], dtype=object)


def assert_same(a: pd.DataFrame, b: pd.DataFrame, by: str, ids, rtol: float = 1e-9) -> None:
    """Same rows (by node and interval end), same identity/quality/hint, every metric within rtol (NaN = NaN)."""
    keys = IDENT[by] + ["interval_end"]
    a = a.sort_values(keys, kind="stable", ignore_index=True)
    b = b.sort_values(keys, kind="stable", ignore_index=True)
    assert len(a) == len(b), (by, len(a), len(b))
    for c in IDENT[by] + ["interval_start", "interval_end", "n_cpus", "generation", "formula_set", "Workload_Hint",
                          "quality"]:
        x, y = _txt(a[c]), _txt(b[c])
        bad = np.flatnonzero(x != y)
        assert not len(bad), (by, c, len(bad), x[bad[0]], y[bad[0]])
    for m in ids:
        x = a[m].to_numpy(dtype=np.float64)
        y = b[m].to_numpy(dtype=np.float64)
        ok = np.isclose(x, y, rtol=rtol, atol=0.0, equal_nan=True)
        assert ok.all(), (by, m, int((~ok).sum()), x[~ok][:3], y[~ok][:3])


def two_cec_dataset(root: Path) -> Path:
    """A dataset at ``root`` of the z16 ZOSB sample (CEC 3931-123F5, 2026-11) and the z15 ZOSB sample (CEC
    8561-45A12, 2026-10): made once per module, then copied for each test (:func:`fresh_copy`)."""
    from app.dataset import Dataset

    ds = Dataset(root, create=True)
    assert ds.extract(SAMPLES[2]).status == "added" and ds.extract(SAMPLES[5]).status == "added"
    return root


def extracted_smf(tmp_path_factory, name: str) -> Path:
    """A dataset of the six SMF 113 samples made by ``nestscope extract`` in a temporary folder of its own (a module
    fixture's, made once)."""
    from app.cli import main

    root = tmp_path_factory.mktemp(name) / "ds"
    assert main(["extract", *map(str, SMF), "--to", str(root), "--quiet"]) == 0
    return root


def fresh_copy(pristine: Path, tmp_path: Path):
    """A test's own copy of the module's pristine dataset (the tests damage and change it)."""
    from app.dataset import Dataset

    root = tmp_path / "ds"
    shutil.copytree(pristine, root)
    return Dataset(root)


def whole_and_chunked(path, tmp_path, mb: float, monkeypatch):
    """The file extracted whole (default 32 MiB chunks: every file the stream tests use fits one) and in chunks
    of ``mb`` MiB (``NESTSCOPE_EXTRACT_CHUNK_MB``): (whole dataset, its result, chunked dataset, its result)."""
    from app.dataset import Dataset

    whole = Dataset(tmp_path / "whole", create=True)
    rw = whole.extract(path)
    assert rw.status == "added" and "chunks" not in rw.entry
    monkeypatch.setenv("NESTSCOPE_EXTRACT_CHUNK_MB", str(mb))
    cut = Dataset(tmp_path / "cut", create=True)
    rc = cut.extract(path)
    monkeypatch.delenv("NESTSCOPE_EXTRACT_CHUNK_MB")
    return whole, rw, cut, rc


def retimed_records(s: pd.DataFrame, k: int, factor: Fraction) -> list[bytes]:
    """The SMF 113 subtype-2 records of ``s`` with every time after the k-th interval's end moved so that the
    steps after it are ``factor`` times as long (the run's start and the first k intervals as they were), and
    each counter's growth since then scaled alike (the same rates: no interval made implausible)."""
    t = s["time"].to_numpy("datetime64[ns]").view(np.int64)
    t0 = int(np.unique(t)[k])
    after = t > t0
    new = np.where(after, t0 + (t - t0) * factor.numerator // factor.denominator, t)
    out = s.copy()
    out["time"] = new.view("datetime64[ns]")
    if "local_time" in out.columns:         # the record's local time moves with it (the same UTC offset)
        out["local_time"] = out["local_time"].to_numpy("datetime64[ns]") + (new - t).view("timedelta64[ns]")
    at_t0 = s[t == t0].set_index("cpu")
    from app.formats.schema import is_counter_column

    for c in (c for c in s.columns if is_counter_column(c)):
        v = s[c].to_numpy()
        if not np.issubdtype(v.dtype, np.integer):
            continue
        base = at_t0[c].reindex(s["cpu"]).to_numpy()
        grown = [int(b) + (int(x) - int(b)) * factor.numerator // factor.denominator for x, b in zip(v, base)]
        out[c] = np.where(after, np.array(grown, dtype=object), v).astype(v.dtype)
    from app.formats.smf113_writer import encode_samples

    return encode_samples(out, 2)
