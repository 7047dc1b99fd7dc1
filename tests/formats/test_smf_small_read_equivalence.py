"""The SMF 113 reader's per-call shortcuts give what the plain pandas formulations give.

A small read used to spend most of its time building the frame: a categorical dtype per text column, a Series
per column for the checks, a groupby and a ``to_dict`` for the summary.  The reader now builds each label list's
dtype once, reads the checks' columns from the arrays the frame was built from, counts the classes from category
codes, and gathers the records of a shape off a constant stride in one numpy row gather.  Each of these is checked
here against the formulation it replaced, on drawn inputs and on the bundled samples and files cut from them."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.formats import common, smf113

SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "samples"
SMF_SAMPLES = sorted(p.name for p in SAMPLES.glob("*smf113*.gz"))

labels_st = st.lists(st.one_of(st.none(), st.sampled_from(["", "GCP", "zIIP", "zCBP", "SYSA", "3931", "A01"]),
                               st.text(max_size=6)), min_size=1, max_size=80)


@settings(max_examples=150, deadline=None)
@given(labels_st, st.data())
def test_categorical_from_codes_is_astype_category(labels, data):
    codes = np.array(data.draw(st.lists(st.integers(0, len(labels) - 1), max_size=40)), np.int64)
    arr = np.asarray(labels, dtype=object)
    # the categories astype("category") makes of every label, the values labels[codes] (None: missing)
    want = pd.Categorical(pd.Series(arr[codes], dtype=object), dtype=pd.Series(arr).astype("category").dtype)
    for _ in range(2):                    # the second call finds the dtype made by the first (<= 64 labels)
        got = common.categorical_from_codes(labels, codes)
        assert got.dtype == want.dtype
        assert list(got.categories) == list(want.categories)
        assert np.array_equal(got.codes, want.codes)
        pd.testing.assert_extension_array_equal(got, want)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([52, 60, 61, 77]), min_size=1, max_size=30), st.integers(0, 2**32 - 1))
def test_shape_matrix_gather_is_the_records_bytes(lengths, seed):
    # records of several lengths back to back (the compact buffer); the records of one length are a shape whose
    # starts have no constant stride unless by chance: the matrix must hold exactly their bytes, in order
    rng = np.random.default_rng(seed)
    recs = [rng.integers(0, 256, n, dtype=np.uint8).tobytes() for n in lengths]
    lens = np.array(lengths, np.int64)
    starts = np.r_[0, np.cumsum(lens)[:-1]].astype(np.int64)
    buf = b"".join(recs)
    dec = smf113._Decoder(buf, starts, lens)
    pairs = list(zip(starts.tolist(), recs))
    for n in set(lengths):
        idx = np.flatnonzero(lens == n)
        m = smf113._shape_matrix(dec, pairs, idx)
        assert m.shape == (len(idx), n)
        assert m.tobytes() == b"".join(recs[i] for i in idx)


def _cuts() -> list[tuple[str, int]]:
    out = []
    for name in SMF_SAMPLES:
        out += [(name, cut) for cut in (100, 700, 1500, 2600, 2900, 4100, 5124, 9000, 20000)]
    return out


def _reference_summary(df: pd.DataFrame) -> dict:
    """The summary as the reader computed it before (drop_duplicates, unique, groupby)."""
    if df.empty:
        return dict(n_samples=0, time_range=None, machines=[], systems=[], classes={}, cpus=0)
    m = df[["cec", "machine_type", "model", "serial"]].drop_duplicates(["cec"])
    cpus = df[["system", "class", "cpu"]].drop_duplicates()
    return dict(n_samples=len(df), time_range=[df["time"].min().isoformat(), df["time"].max().isoformat()],
                machines=[{k: str(v) for k, v in r.items()} for r in m.to_dict("records")],
                systems=sorted(str(s) for s in df["system"].unique()),
                classes={str(k): int(v) for k, v in cpus.groupby("class", observed=True).size().items()},
                cpus=len(cpus))


def _check(res) -> None:
    df = res.samples
    ref = _reference_summary(df)
    got = {k: res.meta[k] for k in ref}
    assert got == ref
    assert list(got["classes"]) == list(ref["classes"])        # same order (category order)
    assert not df.duplicated(["system", "cpu", "class", "time", "kind"]).any()
    for col in ("cec", "machine_type", "model", "serial", "lpar", "system", "class", "kind", "os", "source"):
        # each categorical as astype("category") of its values would make it
        want = df[col].astype(object).astype("category")
        pd.testing.assert_series_equal(df[col], want, check_names=False)


@pytest.mark.parametrize("name", SMF_SAMPLES)
def test_sample_summary_and_categories_as_pandas_gives(name, sample_result):
    res = sample_result(name)
    assert len(res.samples) > 1000                       # a bundled sample: thousands of CPU intervals
    _check(res)


@pytest.mark.parametrize("name,cut", _cuts())
def test_cut_file_summary_and_categories_as_pandas_gives(name, cut):
    data = gzip.decompress((SAMPLES / name).read_bytes())[:cut]
    _check(smf113.read_smf(data, name))


@pytest.mark.parametrize("name", [n for n in SMF_SAMPLES if n.endswith(".rdw.gz")][:2])
def test_repeated_records_dropped_as_duplicated_finds(name):
    # the first 40 records twice: the second copy repeats every row (what df.duplicated finds), dropped with one
    # finding; the frame is the first copy's
    data = gzip.decompress((SAMPLES / name).read_bytes())
    end = 0
    for _ in range(40):
        end += int.from_bytes(data[end:end + 2], "big")        # RDW length
    once = smf113.read_smf(data[:end], name)
    twice = smf113.read_smf(data[:end] * 2, name)
    assert len(once.samples) > 0
    pd.testing.assert_frame_equal(twice.samples, once.samples)
    dup = [f for f in twice.findings if f.code == "duplicate-record"]
    assert len(dup) == 1 and dup[0].offset == end and f"{len(once.samples)} records repeat" in dup[0].message
    _check(twice)
