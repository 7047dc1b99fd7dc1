"""The SMF reader's counter layout is the caller's choice (issue 24): the default read (``read_file``, the window,
the CLI, the engine's add, the cache) holds each counter set in one (records x counters) block in row order, a
record's counters adjacent (the engine's row gathers copy contiguous spans: the fastest layout for them); the
dataset's extract (``read_chunks(..., by_column=True)``) holds them in blocks of at most
``smf113.COUNTER_GROUP`` counters in column order, each counter one contiguous array (Arrow takes it without a
copy; a chunk's copy after the carried samples lets go of a block at a time).  The values are the same."""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from app.dataset import Dataset
from app.formats import chunks, kernel, read_bytes, read_file, smf113

ROOT = Path(__file__).resolve().parents[2]
SMF = sorted((ROOT / "resources" / "samples").glob("*smf113*"))

compiled = pytest.mark.skipif(not kernel.available(), reason="the compiled kernel is not built here")


def _counters(df: pd.DataFrame) -> list[str]:
    return [c for c in df.columns if c[0] in "BPKEM" and c[1:].isdigit()]


def _blocks(df: pd.DataFrame) -> list[list[np.ndarray]]:
    """The frame's counter arrays grouped by the memory they share (a block each)."""
    groups: list[list[np.ndarray]] = []
    for c in _counters(df):
        a = df[c].to_numpy()
        base = a.base if a.base is not None else a
        g = next((g for g in groups if np.shares_memory(g[0].base if g[0].base is not None else g[0], base)), None)
        if g is None:
            groups.append([a])
        else:
            g.append(a)
    return groups


def _addr(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


@compiled
@pytest.mark.parametrize("path", SMF, ids=lambda p: p.name)
def test_the_default_read_holds_row_order_blocks_the_extracts_column_order(path):
    rows = read_file(path).samples
    cols = read_bytes(path.read_bytes(), str(path), by_column=True).samples      # (read_file names it so)
    blocks = _blocks(rows)
    assert blocks
    for g in blocks:
        # row order: k counters side by side in each record's row of the block, so each counter's stride is the
        # row's, 8 bytes x k, and the counters' first values are 8 bytes apart (adjacent words of one row)
        k = len(g)
        assert all(a.strides == (8 * k,) for a in g)
        starts = sorted(_addr(a) for a in g)
        assert np.all(np.diff(starts) == 8)
    # a whole set in one block: wider than a column-order block (the z15 and z16 extended sets: 8 < counters)
    assert max(map(len, blocks)) > smf113.COUNTER_GROUP
    for g in _blocks(cols):
        # column order: each counter one contiguous array, at most COUNTER_GROUP in a block
        assert len(g) <= smf113.COUNTER_GROUP
        assert all(a.strides == (8,) and a.flags.c_contiguous for a in g)
    pd.testing.assert_frame_equal(cols, rows)          # the same columns and values


@compiled
def test_the_extract_reads_its_chunks_by_column(tmp_path, monkeypatch):
    path = ROOT / "resources" / "samples" / "after_z16_ZOSA_smf113.rdw.gz"
    f = tmp_path / "zosa.rdw"
    f.write_bytes(gzip.decompress(path.read_bytes()))
    real = chunks.read_chunks
    seen: list[tuple[dict, bool]] = []

    def spy(data, file, **kw):
        for r in real(data, file, **kw):
            seen.append((kw, all(r.samples[c].to_numpy().flags.c_contiguous for c in _counters(r.samples))))
            yield r
    monkeypatch.setattr(chunks, "read_chunks", spy)
    res = Dataset(tmp_path / "ds", create=True).extract(f)
    assert res.status == "added" and res.samples == 4620       # the file's samples (test_read_memory)
    assert seen and all(kw.get("by_column") is True and contiguous for kw, contiguous in seen)
