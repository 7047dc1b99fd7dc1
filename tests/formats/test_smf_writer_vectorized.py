"""The vectorized ``encode_samples`` is byte-identical to the row-by-row reference encoder."""

from __future__ import annotations

import struct
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))   # repo root for app

from app.formats import smf113
from app.formats import smf113_writer as W
from app.formats.schema import (
    BASE_OF_BIT,
    LETTER_OF_BIT,
    SET_BASIC,
    SET_CRYPTO,
    SET_EXTENDED,
    SET_MT,
    SET_PROBLEM,
)
from app.formats.smf113_layout import MACHINES

ALL_SETS = SET_BASIC | SET_PROBLEM | SET_CRYPTO | SET_EXTENDED | SET_MT
SET_CHOICES = [SET_BASIC | SET_PROBLEM | SET_EXTENDED, ALL_SETS, SET_BASIC | SET_PROBLEM | SET_CRYPTO,
               SET_BASIC | SET_PROBLEM, SET_EXTENDED | SET_MT, 0, SET_BASIC]
SIZES = {SET_BASIC: 6, SET_PROBLEM: 6, SET_CRYPTO: 20, SET_EXTENDED: 160, SET_MT: 48}


def frame(n: int, seed: int, mtypes=None, variant: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    mtypes = list(mtypes or sorted(MACHINES))
    mt = rng.choice(mtypes, n)
    t0 = np.datetime64("2026-10-01T23:45:00", "ns")
    df = pd.DataFrame({
        "system": rng.choice(["SYSA", "ZOSB", "VM1", "LONGSYSTEM"], n),
        "cpu": rng.integers(0, 300, n),
        "core": rng.integers(-1, 150, n),
        "class": rng.choice(["GCP", "zIIP", "zCBP", "zAAP", "IFL", "CP"], n),
        "cpu_speed": rng.integers(0, 6000, n),
        "machine_type": mt,
        "model": rng.choice(["A01", "LT1", "MAX200"], n),
        "serial": rng.choice(["123F5", "45A12", "00000000000BE7C4"], n),
        "cfvn": [MACHINES[m][1] for m in mt],
        "csvn": [MACHINES[m][2] for m in mt],
        "sets": rng.choice(SET_CHOICES, n),
        "lost": rng.random(n) < 0.2,
        "first": rng.random(n) < 0.2,
        "run_start": t0 - np.timedelta64(3, "D"),
        "time": t0 + rng.integers(0, 2 * 3600 * 10**6, n).astype("timedelta64[us]").astype("timedelta64[ns]"),
    })
    ctr = {}
    for bit, k in SIZES.items():
        for j in range(k):
            name = f"{LETTER_OF_BIT[bit]}{BASE_OF_BIT[bit] + j}"
            if variant == 1 and j % 7 == 3:
                continue                                   # absent columns are written as 0
            v = rng.integers(0, 2**31, n, dtype=np.uint64)
            big = rng.random(n) < 0.05                     # some rows need 8-byte problem / crypto / MT sets
            ctr[name] = np.where(big, v + np.uint64(2**33), v)
    df = pd.concat([df, pd.DataFrame(ctr)], axis=1)
    if variant == 1:
        df["flags"] = rng.integers(0, 2, n) * 0x0100
        df["cls_code"] = rng.integers(0, 5, n)
        df["seqcode"] = "00000000000ABCDE"
        df["system"] = df["system"].astype("category")
    if variant == 2:
        df = df.drop(columns=["class", "core", "cpu_speed", "model", "serial", "lost", "first"])
    return df


@pytest.mark.parametrize("variant", [0, 1, 2])
@pytest.mark.parametrize("subtype", [1, 2])
def test_vectorized_matches_rowwise_all_generations(subtype, variant):
    df = frame(600, 7 + variant, variant=variant)
    new = W.encode_samples(df, subtype)
    assert new == W._encode_samples_rowwise(df, subtype)
    assert all(type(r) is bytes for r in new)


@pytest.mark.parametrize("mtype", sorted(MACHINES))
@pytest.mark.parametrize("subtype", [1, 2])
def test_vectorized_matches_rowwise_per_generation(mtype, subtype):
    df = frame(40, int(mtype), [mtype])
    assert W.encode_samples(df, subtype) == W._encode_samples_rowwise(df, subtype)


def test_vectorized_chunks_and_read_back(monkeypatch):
    monkeypatch.setattr(W, "_CHUNK", 7)                 # shapes split over many chunks keep row order
    df = frame(200, 3)
    recs = W.encode_samples(df, 1)
    assert recs == W._encode_samples_rowwise(df, 1)
    res = smf113.read_smf(W.frame_rdw(recs), "v.smf")
    assert len(res.samples) == len(df)


def test_vectorized_empty_and_range_errors():
    df = frame(5, 1)
    assert W.encode_samples(df.iloc[:0], 1) == []
    wide_core = df.assign(core=70000)                    # no CoreId field in subtype 2: accepted there
    assert W.encode_samples(wide_core, 2) == W._encode_samples_rowwise(wide_core, 2)
    bad = df.assign(cpu=70000)
    for enc in (W.encode_samples, W._encode_samples_rowwise):
        with pytest.raises(struct.error):
            enc(bad, 2)
