"""The names of intervals of another file computed again by an extract (issue 24): such a row keeps its file's
name (``source``) and hash (``sha256``), held as a categorical (``app.dataset.tables.with_names``: each name
once, not a string a row) and written as the same strings an object column of them gives."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from _fleet_helpers import SAMPLES
from app.dataset import Dataset, tables
from app.formats import read_file


def _written(values) -> list:
    """The strings a part file holds for a column (tables._column's way for a name column)."""
    return tables._column(pd.Series(values), "string").to_pylist()


def test_with_names_gives_the_object_columns_strings():
    s = pd.Series(pd.Categorical(["a", "b", "a", "c", "b"]))
    rows = np.array([False, True, False, True, True])
    vals = np.array(["x", np.nan, "a"], dtype=object)       # a new name, a missing one (NULL), a known one
    got = tables.with_names(s, rows, vals)
    assert isinstance(got, pd.Categorical)
    old = s.astype(str).to_numpy(dtype=object)
    old[rows] = vals                                        # the object column the extract made before
    assert _written(got) == _written(old) == ["a", "x", "a", None, "a"]
    assert list(got.categories) == ["a", "b", "c", "x"]     # each name once ("b" is no longer used: kept)


@pytest.mark.parametrize("s", [pd.Series(["a", "b"]),                               # not a categorical
                               pd.Series(pd.Categorical(["a", None])),               # a missing name
                               pd.Series(pd.Categorical([1, 2]))])                   # no strings
def test_with_names_leaves_other_columns_to_the_object_way(s):
    assert tables.with_names(s, np.array([True, False]), np.array(["x"], dtype=object)) is None


def test_with_names_refuses_values_that_are_not_text():
    s = pd.Series(pd.Categorical(["a", "b"]))
    assert tables.with_names(s, np.array([True, False]), np.array([3], dtype=object)) is None


def test_a_gap_interval_keeps_the_name_and_hash_of_the_file_ending_it(tmp_path, monkeypatch):
    # running totals (the z16 ZOSB sample as subtype 2: 8 CPUs, 1544 records of 1536 bytes): records 0-336 and
    # 586-1543 in the dataset, then 297-641 in chunks: b's chunks compute again the interval ending at c's first
    # sample of each CPU (the gap interval), which c ends and names
    from app.formats.smf113_writer import encode_samples, frame_rdw

    data = frame_rdw(encode_samples(read_file(SAMPLES[2]).samples, 2))

    def piece(name, lo, hi):
        p = tmp_path / name
        p.write_bytes(data[lo * 1536:hi * 1536])
        return p
    ds = Dataset(tmp_path / "ds", create=True)
    a, c = piece("a.rdw", 0, 337), piece("c.rdw", 586, 1544)
    sha = {}
    for p in (a, c):
        r = ds.extract(p)
        assert r.status == "added"
        sha[r.entry["name"]] = r.entry["sha256"]
    monkeypatch.setenv("NESTSCOPE_EXTRACT_CHUNK_MB", "0.2")
    r = ds.extract(piece("b.rdw", 297, 642))
    assert r.status == "added" and r.entry["chunks"] == 3
    sha["b.rdw"] = r.entry["sha256"]
    iv = pd.read_parquet(ds.root / "intervals", columns=["source", "sha256", "cpu", "t_start", "t_end"])
    assert iv["source"].notna().all() and iv["sha256"].notna().all()
    names = iv["source"].astype(str).map(lambda x: x.rsplit("/", 1)[-1])
    # the gap intervals: one a CPU, started before c's first sample (in b) and ending at a sample of c: named c
    samples = pd.read_parquet(ds.root / "samples", columns=["source", "cpu", "time"])
    c_first = samples.loc[samples["source"].astype(str).str.endswith("c.rdw")].groupby("cpu")["time"].min()
    gap = (names == "c.rdw") & (iv["t_start"] < iv["cpu"].map(c_first))
    assert gap.sum() == 8 and iv.loc[gap, "cpu"].nunique() == 8
    # ... and c's hash: the name and the hash of a row are the same file's (the manifest's entry for that hash
    # names it); before, b marking the samples it holds too overwrote the stored samples' hash with its own
    assert (iv.loc[gap, "sha256"].astype(str) == sha["c.rdw"]).all()
    assert set(names) == {"a.rdw", "b.rdw", "c.rdw"}
    # every other row of a or c keeps its file's hash; every hash is one of the three files'
    own = names.isin(["a.rdw", "c.rdw"]) & ~gap
    assert (iv.loc[own, "sha256"].astype(str) == names[own].map(sha)).all()
    assert set(iv["sha256"].astype(str)) <= set(sha.values())
