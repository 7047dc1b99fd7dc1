"""The SMF 113 decoder reads a shape's records through a zero-copy strided view of the compact record buffer when
they follow each other at a constant stride, and through a copy otherwise; counters of a single shape go to the
frame as one block, of several shapes by a scatter.  Every path must give the same samples."""

from __future__ import annotations

import datetime as dt
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))   # tests/ for smf_builders
import smf_builders as B  # noqa: E402

from app.formats import read_bytes, smf113  # noqa: E402
from app.formats import smf113_writer as W  # noqa: E402
from app.sample.build import MIX_GCP, MIX_ZIIP  # noqa: E402
from app.sample.model import CecModel, ClassModel, LparModel, make_samples  # noqa: E402


def _records(subtype: int) -> list[bytes]:
    lpars = [LparModel(f"LP{i}", f"SY{i}", [ClassModel("GCP", 3, 60, 3.0, 3.0, MIX_GCP),
                                            ClassModel("zIIP", 2, 35, 2.5, 2.2, MIX_ZIIP, 85)]) for i in range(2)]
    samples, _ = make_samples(CecModel("z16", "00000000000BE7C4", lpars), dt.datetime(2026, 10, 1), 12, 900.0,
                              seed=3)
    return W.encode_samples(samples, subtype)


def _without_offsets(df: pd.DataFrame) -> pd.DataFrame:
    return df.drop(columns=["offset"]).reset_index(drop=True)


def test_strided_view_and_copy_give_the_same_samples(monkeypatch):
    recs = _records(2)
    clean = read_bytes(W.frame_rdw(recs), "f")
    # other record types of varying length between the 113s (the framing leaves them out of the record buffer)
    mixed = []
    for i, r in enumerate(recs):
        mixed.append(r)
        if i % 3 == 0:
            mixed.append(B.other(30, 100 + 8 * (i % 5)))
    noisy = read_bytes(b"".join(mixed), "f")
    assert len(clean.samples) == len(recs) == 120           # 2 LPARs x 5 CPUs x 12 intervals
    pd.testing.assert_frame_equal(_without_offsets(clean.samples), _without_offsets(noisy.samples))
    # and with the view turned off altogether
    calls = []
    real = smf113._shape_matrix

    def copy_only(dec, recs_, idx, *scatter):
        calls.append(len(idx))
        m = real(dec, recs_, idx, *scatter)
        return m.copy()

    monkeypatch.setattr(smf113, "_shape_matrix", copy_only)
    monkeypatch.setattr(smf113, "_one_shape", lambda *a, **k: False)    # the shape loop, not the one-pass decode
    again = read_bytes(W.frame_rdw(recs), "f")
    assert calls
    pd.testing.assert_frame_equal(clean.samples, again.samples)


def test_one_shape_block_and_scatter_of_several_shapes_agree():
    # subtype 1 and 2 records of the same CPUs in one file: two shapes, counters scattered into one block
    r1, r2 = _records(1), _records(2)
    both = read_bytes(W.frame_rdw(r1 + r2), "f").samples
    only1 = read_bytes(W.frame_rdw(r1), "f").samples
    only2 = read_bytes(W.frame_rdw(r2), "f").samples
    d = both[both["kind"] == "delta"].reset_index(drop=True)
    a = both[both["kind"] == "absolute"].reset_index(drop=True)
    pd.testing.assert_frame_equal(d[only1.columns.drop("offset")], _without_offsets(only1),
                                  check_categorical=False)
    # subtype 2 rows: same values; counters their records do not carry are 0 (schema)
    cols = [c for c in only2.columns if c != "offset"]
    pd.testing.assert_frame_equal(a[cols], _without_offsets(only2), check_categorical=False)


def test_interleaved_shapes_strided_at_their_period():
    # subtype 1 and 2 records alternating: each shape's records sit at a constant stride of both lengths
    r1, r2 = _records(1), _records(2)
    inter = [r for pair in zip(r1, r2) for r in pair]
    a = read_bytes(W.frame_rdw(inter), "f").samples
    b = read_bytes(W.frame_rdw(r1 + r2), "f").samples
    key = ["kind", "system", "cpu", "class", "time"]
    pd.testing.assert_frame_equal(_without_offsets(a.sort_values(key)), _without_offsets(b.sort_values(key)))


def test_shapes_not_at_one_stride_gathered_in_place_give_the_same_samples(monkeypatch):
    """``app.formats.GATHER_IN_PLACE`` (set by the command line for export and compare, a fresh process reading each
    file once): the records of a shape that do not follow each other at one stride are gathered where they are, a
    block at a time (``kernel.ScatteredRows``), not from a copy of the shape's records; the same samples."""
    from app import formats
    from app.formats import kernel

    r1, r2 = _records(1), _records(2)
    # pairs of a subtype 1 and a subtype 2 record, in turn one first and the other: no shape at one stride
    mixed = [r for i, (a, b) in enumerate(zip(r1, r2)) for r in ((a, b) if i % 2 else (b, a))]
    data = W.frame_rdw(mixed)
    kinds = []
    real = smf113._shape_matrix

    def spy(*a, **kw):
        m = real(*a, **kw)
        kinds.append(type(m).__name__)
        return m
    monkeypatch.setattr(smf113, "_shape_matrix", spy)
    monkeypatch.setattr(formats, "GATHER_IN_PLACE", False)
    copied = read_bytes(data, "f").samples
    assert kinds and set(kinds) == {"ndarray"}
    kinds.clear()
    monkeypatch.setattr(formats, "GATHER_IN_PLACE", True)
    in_place = read_bytes(data, "f").samples
    if kernel.available():
        assert set(kinds) == {"ScatteredRows"}
    assert len(in_place) == len(mixed) == 240
    pd.testing.assert_frame_equal(in_place, copied)
