"""A compressed SMF stream of RDW records is cut in chunks through an unnamed temporary file (issue 24: an
extract's peak within 1.5x the largest decoded chunk): each chunk's bytes are gathered in the file (the page
cache, not the heap) and decoded from a map of it, whose pages the reader maps a block at a time and hands back.
The chunks must be those of the whole file: the same samples, offsets and findings in any chunk size.

Sample (resources/samples): z16 ZOSA, RDW in gzip, 4,620 records (subtype 1 and 2), 7,784,976 bytes
decompressed."""

from __future__ import annotations

import gzip
import mmap
import os
from pathlib import Path

import pandas as pd
import pytest

from app.formats import chunks, read_bytes

SAMPLE = Path(__file__).resolve().parents[2] / "resources" / "samples" / "after_z16_ZOSA_smf113.rdw.gz"


def _spy_pieces(monkeypatch) -> list:
    seen = []
    real = chunks._read_at

    def spy(piece, pos, *a, **k):
        seen.append((type(getattr(piece, "obj", piece)).__name__, pos, len(piece)))
        return real(piece, pos, *a, **k)
    monkeypatch.setattr(chunks, "_read_at", spy)
    return seen


@pytest.mark.parametrize("chunk", [1 << 20, 2_500_000, 3_000_001])
def test_gzip_chunks_are_read_from_a_map_of_a_temporary_file(chunk, monkeypatch, tmp_path):
    data = SAMPLE.read_bytes()
    spool = tmp_path / "spool"
    spool.mkdir()
    monkeypatch.setenv("NESTSCOPE_SPOOL_DIR", str(spool))
    seen = _spy_pieces(monkeypatch)
    got = list(chunks.read_chunks(data, "z.gz", chunk=chunk, by_column=True))
    # every chunk a window of a map (the temporary file), not bytes of the heap; offsets one after the other
    assert [k for k, _p, _n in seen] == ["mmap"] * len(seen) and len(seen) == len(got) >= 2
    assert [p for _k, p, _n in seen] == [0] + list(pd.Series([n for _k, _p, n in seen]).cumsum()[:-1])
    assert sum(n for _k, _p, n in seen) == 7_784_976
    assert [r.meta["more"] for r in got] == [True] * (len(got) - 1) + [False]
    assert os.listdir(spool) == []              # unnamed: nothing left behind
    whole = read_bytes(data, "z.gz", by_column=True)
    cut = pd.concat([r.samples for r in got], ignore_index=True)
    assert len(cut) == len(whole.samples) == 4620
    pd.testing.assert_series_equal(cut["offset"], whole.samples["offset"])      # offsets in the decompressed data
    pd.testing.assert_frame_equal(cut.drop(columns=["source"]).astype({"cec": object}),
                                  whole.samples.drop(columns=["source"]).astype({"cec": object}), check_exact=True,
                                  check_categorical=False)
    assert {r.framing for r in got} == {whole.framing}


def test_a_gzip_stream_within_one_chunk_is_read_whole(monkeypatch):
    data = SAMPLE.read_bytes()
    seen = _spy_pieces(monkeypatch)
    got = list(chunks.read_chunks(data, "z.gz", chunk=8 << 20))     # more than its 7,784,976 bytes
    assert len(got) == 1 and seen == [] and len(got[0].samples) == 4620


def test_a_cut_gzip_stream_keeps_what_came_before_the_cut(tmp_path, monkeypatch):
    data = SAMPLE.read_bytes()
    cut = data[: len(data) * 2 // 3]
    got = list(chunks.read_chunks(cut, "cut.gz", chunk=1 << 20))
    whole = read_bytes(cut, "cut.gz")
    assert sum(len(r.samples) for r in got) == len(whole.samples) > 2000
    codes = [f.code for r in got for f in r.findings]
    assert {f.code for f in whole.findings} <= set(codes)
    assert all(f.file == "cut.gz" for r in got for f in r.findings)


BLOCKED = [(SAMPLE.with_name("after_z16_ZOSC_smf113.bdw.gz"), "bdw"), (SAMPLE.with_name("after_z16_ZOSB_smf113.vbs.gz"),
                                                                       "vbs")]


@pytest.mark.parametrize("path,framing", BLOCKED, ids=["bdw", "vbs"])
@pytest.mark.parametrize("plain", [False, True], ids=["gzip", "plain"])
def test_blocked_chunks_and_their_records_go_through_temporary_files(path, framing, plain, monkeypatch, tmp_path):
    # a blocked file (BDW blocks; VBS: spanned records cut at their last segment) in chunks of 1 MiB, plain (a
    # map of the file) or gzipped: each chunk decoded from a map of the chunk file; the extract's read
    # (by_column) puts the chunk's records back to back in a second temporary file (SPOOL_FROM lowered so the
    # sample's chunks are spooled) instead of joining them in the heap
    from app.formats import smf113

    data = gzip.decompress(path.read_bytes()) if plain else path.read_bytes()
    if plain:
        f = tmp_path / "b.smf"
        f.write_bytes(data)
        fh = open(f, "rb")
        data = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
    spool = tmp_path / "spool"
    spool.mkdir()
    monkeypatch.setenv("NESTSCOPE_SPOOL_DIR", str(spool))
    monkeypatch.setattr(smf113, "SPOOL_FROM", 64 << 10)
    joined = []
    real = smf113._spooled_records
    monkeypatch.setattr(smf113, "_spooled_records", lambda recs, total: (joined.append(total), real(recs, total))[1])
    seen = _spy_pieces(monkeypatch)
    got = list(chunks.read_chunks(data, "b", chunk=1 << 20, by_column=True))
    assert len(got) >= 3 and [k for k, _p, _n in seen] == ["mmap"] * len(got)
    assert len(joined) == len(got) and os.listdir(spool) == []
    whole = read_bytes(bytes(data), "b", by_column=True)
    assert whole.framing.startswith(framing) and {r.framing for r in got} == {whole.framing}
    cut = pd.concat([r.samples for r in got], ignore_index=True)
    assert len(cut) == len(whole.samples) > 1500          # ZOSC 2,304 records, ZOSB 1,544
    pd.testing.assert_frame_equal(cut.drop(columns=["source"]).astype({"cec": object}),
                                  whole.samples.drop(columns=["source"]).astype({"cec": object}), check_exact=True,
                                  check_categorical=False)
    assert [f.code for r in got for f in r.findings if f.severity != "info"] == \
        [f.code for f in whole.findings if f.severity != "info"]
    if plain:
        data.close()
        fh.close()
