"""A MONWRITE stream read a chunk of blocks at a time, for ``extract`` (issue 24): memory follows the chunk.

The careful walk (:class:`app.formats.monwrite._Walk`) goes over the whole stream, block after block, keeping
what it carries from record to record: the system (D1R4), each CPU's type and core (D1R5, D0R2), the open
P-bit series, the interval count, the findings said so far.  Once ``step`` bytes of blocks were walked since the
last chunk, the intervals that ended (a sample D1R11) are taken out and decoded as one chunk; the interval
still open stays for the next.  A D5R20 and its D5R13, and a D0R16's entries, are thus always decoded together.
Partition rows (D0R16) are computed with each partition CPU's last entry before the chunk as context (busy % is
a delta of two samples), whose own rows are not given again.  What a file says once is said once: the MT length, the
non-thread-0 D5R20 count and the partition count are said with the last chunk, as are the "more findings"
counts.

The stream is the whole (decompressed) data, random access: the memory map of a plain file, or a gzip or tersed
file's decompressed bytes spooled to an unnamed temporary file and mapped (:func:`spooled`).  The pages walked
are handed back to the kernel after each chunk.  Offsets are those of the whole stream, as the whole-file read
gives them.  An RDW-wrapped copy (``monwrite-rdw``: a 4-byte record descriptor word before each 4096-byte
record) is deblocked first (:func:`rdw_chunks`) by the whole-file read's own deblocking, into a second unnamed
temporary file, with the file offset of each page kept (8 bytes a page) so samples and findings name the offsets
of the RDW-wrapped data.  Not streamed (read whole): ASCII or packed transfers.

The whole-file read takes the same records, with one difference: the type and core of a CPU are those in force
when its chunk is decoded, where the whole file's read applies the last ones of the file to every interval (a
CPU whose D1R5 changes inside a file); and the unit of D0R16 times (TOD or microseconds) is judged per chunk.
"""

from __future__ import annotations

import mmap
import os
from array import array
from collections.abc import Callable, Iterable, Iterator

import pandas as pd

from app.findings import Finding
from app.formats import monwrite_records as R
from app.formats.monwrite_blocks import DETECT_BYTES
from app.formats.schema import ReadResult, empty_samples

__all__ = ["HEAD", "streamable", "monwrite_chunks", "rdw_chunks", "spooled"]

HEAD = max(1 << 20, DETECT_BYTES)         # a stream's first bytes that :func:`streamable` is given


def streamable(head) -> str | None:
    """How a stream whose first bytes are ``head`` (:data:`HEAD` of them, or all) is streamed: ``"monwrite"``
    (a valid MONWRITE block first), ``"monwrite-rdw"`` (RDW-wrapped, as the whole-file read judges it:
    :func:`app.formats.monwrite_blocks.rdw_framed`), or None (not MONWRITE, or not streamed)."""
    from app.formats.monwrite_blocks import _block_ok, rdw_framed

    if len(head) < R.PAGE:
        return None
    if _block_ok(head, 0):
        return "monwrite"
    return "monwrite-rdw" if rdw_framed(head) else None


def rdw_chunks(data, file: str, step: int, size: int, framing: str = "monwrite-rdw",
               pre: Callable[[], list[Finding]] | None = None) -> Iterator[ReadResult]:
    """An RDW-wrapped MONWRITE stream ``data`` (bytes or a read-only map): its records deblocked into an unnamed
    temporary file (the pages of ``data`` handed back as they are copied), which is walked as
    :func:`monwrite_chunks` walks a plain stream, with each page's offset in ``data``."""
    from app.formats.chunks import drop_pages
    from app.formats.monwrite_blocks import deblocked

    bad: list[tuple[int, str]] = []
    pages = array("q")

    def pieces() -> Iterator[bytes]:
        batch: list[bytes] = []
        for fo, page in deblocked(data, bad):
            pages.append(fo)
            batch.append(page)
            if len(batch) == _BATCH:
                yield b"".join(batch)
                batch.clear()
                drop_pages(data, 0, fo)
        yield b"".join(batch)
        drop_pages(data, 0, len(data))
    mm = spooled(pieces())
    try:
        yield from monwrite_chunks(b"" if mm is None else mm, file, step, size, framing, pre, pages, bad)
    finally:
        if mm is not None:
            mm.close()


_BATCH = 256            # deblocked pages written to the temporary file at a time (1 MiB)


def monwrite_chunks(data, file: str, step: int, size: int, framing: str = "monwrite",
                    pre: Callable[[], list[Finding]] | None = None, pages=None,
                    bad: list[tuple[int, str]] = ()) -> Iterator[ReadResult]:
    """Decode the MONWRITE stream ``data`` (bytes or a read-only map) in chunks of about ``step`` bytes of blocks
    (module docstring); ``pre()`` gives findings of the source that go first (a gzip file's); ``pages`` and
    ``bad``: a deblocked stream's page offsets and RDW problems (:func:`rdw_chunks`)."""
    from app.formats.chunks import drop_pages
    from app.formats.monwrite import _Walk, say_bad_rdw

    w = _Walk(data, file, pages or None, None, None)
    say_bad_rdw(w, bad)
    w.streamed, w.said, w.mt_dropped = True, set(), 0
    st = _State(pre)
    last = 0
    for off in w.blocks():
        if off - last >= step and w.sys is not None and w.series and w.series[0][1] < w.interval:
            r = _chunk(w, st, file, framing, size, final=False)
            drop_pages(data, 0, off)
            last = off
            yield r
    w.end_of_file()
    yield _chunk(w, st, file, framing, size, final=True)
    drop_pages(data, 0, len(data))


class _State:
    """What goes from chunk to chunk besides the walk: findings and record counts given so far, each partition
    CPU's last D0R16 entry (the next chunk's context), the most partitions of one interval."""

    def __init__(self, pre):
        self.pre = pre
        self.said_findings = 0
        self.counts: dict[tuple[int, int], int] = {}
        self.context: dict[tuple, tuple] = {}
        self.most = 0
        self.chunks = 0


def _split(items: list, cut: int | None) -> tuple[list, list]:
    """Items (series or D0R16 entries, interval second / first) of intervals before ``cut`` (None: all), rest."""
    if cut is None:
        return items, []
    return [x for x in items if x[_IV[len(x)]] < cut], [x for x in items if x[_IV[len(x)]] >= cut]


_IV = {4: 1, 5: 0}      # where the interval is: series (mt, interval, meta, buf), D0R16 (interval, tod, fo, ...)


def _chunk(w, st: _State, file: str, framing: str, size: int, final: bool) -> ReadResult:
    from app.formats.monwrite import _identity, _local_time
    from app.formats.monwrite_blocks import _NAMES

    st.chunks += 1
    ident = _identity(w)        # (before the cut: without a D1R4 every series waits for the last chunk)
    cut = None if final else w.interval
    series, w.series = _split(w.series, cut)
    cup, w.cup = _split(w.cup, cut)
    mt_rows, w.mt_rows = w.mt_rows, []
    keep_series, keep_cup = w.series, w.cup
    w.series, w.mt_rows = series, mt_rows
    samples = R.build_samples(w, ident, file) if series else empty_samples()
    mt = R.build_mt(w, ident)
    partitions = _partitions(w, st, ident, cup)
    w.series, w.cup = keep_series, keep_cup
    records: dict[str, int] = {}
    other: dict[str, int] = {}
    for (dom, rc), c in sorted(w.counts.items()):
        d = c - st.counts.get((dom, rc), 0)
        name = _NAMES.get((dom, rc))
        if d and name:
            records[name] = d
        elif d:
            other[f"D{dom}R{rc}"] = d
    st.counts = dict(w.counts)
    records["other"] = sum(other.values())
    r = ReadResult(file=file, kind="monwrite", framing=framing, records=records, samples=samples,
                   findings=[], partitions=partitions, mt=mt, size=size,
                   meta={"other_records": other, "page_mapping": w.mode or "page", "intervals": w.interval,
                         "d0r16_time_unit": getattr(w, "unit", None), "more": not final, **(ident or {})})
    zone = (w.sys or {}).get("zone_offset_s")
    if len(samples) and w.sys and (R.zone_offset_ok(zone) or "no-zone-offset" not in w.said):
        if not R.zone_offset_ok(zone):
            w.said.add("no-zone-offset")
        _local_time(w, r)
    if final:
        _last_words(w, st)
        w.close_findings()
    r.findings = w.findings[st.said_findings:]
    st.said_findings = len(w.findings)
    if st.pre is not None and st.chunks == 1:
        r.findings = [*st.pre(), *r.findings]
    return r


def _partitions(w, st: _State, ident: dict, cup: list) -> pd.DataFrame:
    """The chunk's D0R16 entries as partition rows, with the last interval before as context (its rows left
    out); the partition count is said at the end (:func:`_last_words`)."""
    if cup:
        per: dict[int, set] = {}
        for interval, _tod, _fo, part, _cpus in cup:
            per.setdefault(interval, set()).add((part["lpar"], part["lpar_number"]))
        st.most = max(st.most, max(len(v) for v in per.values()))
    npar, w.npar = w.npar, None
    ctx = list(st.context.values())
    w.cup = ctx + cup
    try:
        out = R.build_partitions(w, ident)
    finally:
        w.npar = npar
    if ctx and len(out):
        seen = {e[1] for e in ctx}
        out = out.loc[~out["time"].isin(pd.Series(list(seen), dtype="uint64").pipe(_times))].reset_index(drop=True)
    for interval, tod, fo, part, cpus in cup:      # each CPU's last entry: the next chunk's context
        for c in cpus:
            st.context[(part["lpar"], part["lpar_number"], c[0])] = (interval, tod, fo, part, [c])
    return out


def _times(tods: pd.Series) -> pd.Series:
    from app.formats.common import tod_to_datetime64

    return pd.Series(tod_to_datetime64(tods.to_numpy()))


def _last_words(w, st: _State) -> None:
    """What the whole file's read says once about the whole file."""
    if w.mt_dropped:
        w.find(None, "info", "mt-thread-dedup", f"{w.mt_dropped} D5R20 records of non-thread-0 CPUs not stored",
               "MT-diagnostic counters are core-wide; each core keeps the values of its thread-0 CPU")
    if w.npar is not None and st.most and st.most != w.npar:
        w.find(None, "info", "partition-count", f"D0R15 reports {w.npar} partitions, D0R16 records "
               f"describe {st.most}", "Global Performance Data may be disabled on the HMC")


def spooled(pieces: Iterable[bytes]) -> mmap.mmap | None:
    """The bytes of ``pieces`` written to an unnamed temporary file (:class:`app.formats.pages.Spool`) and mapped
    read-only; None when nothing came."""
    from app.formats.pages import Spool

    spool = Spool("nestscope-spool-")
    try:
        for piece in pieces:
            spool.add(piece)
        return spool.map()
    finally:
        spool.close()