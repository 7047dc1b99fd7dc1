"""SMF record type 113 (HIS / CPU MF counters) subtypes 1 and 2 -> counter samples.

Records are framed by :mod:`app.formats.smf_framing`, copied into one compact
buffer, and grouped by *shape* (same length, section triplets, data-section
structure and counter-set entries).  Each shape's structure is parsed and
checked once (:func:`app.formats.smf113_layout.parse_shape`); then every field
and every counter of all records of the shape is gathered in one numpy
operation (``np.frombuffer`` views as ``>u2``/``>u4``/``>u8``).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection
from typing import Any

import numpy as np
import pandas as pd
from pandas.api.types import union_categoricals

from app import formats, memory
from app.findings import Finding, make_finding
from app.formats import common, kernel, pages
from app.formats.rowkeys import code_groups as _code_groups, firsts as _firsts, groups as _groups, \
    row_codes as _row_codes, word_codes as _word_codes
from app.formats import smf113_layout as L
from app.formats.schema import IDENTITY_COLUMNS, Cancelled, ReadResult, counter_name, empty_samples
from app.formats.smf113_checks import Cols as _Cols, check_samples, summarise as _summarise
from app.formats.smf_framing import RecordSpans, WalkedRecords, detect_framing, frame_records

__all__ = ["looks_like_smf", "read_smf"]

_BLOCKS = "\0blocks"      # key of the counter blocks in a decoded shape's column dict

# Columns only SMF 113 records with an identification section give (spec 5): the interval as HIS states it.
OPTIONAL_COLUMNS = ("rec_start", "rec_end", "local_time")   # local_time: header TME/DTE, naive local time
MAX_DETAIL = 10          # individual findings per code before they are only counted


def looks_like_smf(data: bytes) -> bool:
    """True when a chain of SMF records validates under RDW, BDW/VBS or double-RDW framing."""
    return detect_framing(data) in ("rdw", "bdw", "double-rdw")


class _Findings:
    """Collects findings, aggregating repeats of one code into a count."""

    def __init__(self, file: str) -> None:
        self.file, self.items, self.extra = file, [], {}

    def add(self, off, sev, code, what, meaning="", count=1, **key) -> None:
        if count > 1:
            what += f" ({count} records like this; the first is at this offset)"
        n = sum(1 for f in self.items if f.code == code)
        if n >= MAX_DETAIL:
            first, c = self.extra.get(code, (off, 0))
            self.extra[code] = (first, c + count)
            return
        self.items.append(make_finding(self.file, off, sev, code, what, meaning, **key))

    def done(self) -> list[Finding]:
        for code, (off, c) in self.extra.items():
            self.items.append(make_finding(self.file, off, "warning", code, f"{c} more records with finding "
                              f"'{code}' (not listed one by one)", "see the findings above for what it means"))
        return self.items


def _text_words(name: str, off: int, w: int) -> dict[str, tuple[int, int]]:
    """A text field as big-endian words of at most 8 bytes (gathered with the numbers, compared as integers)."""
    return {f"{name}#{k}": (off + k, min(8, w - k)) for k in range(0, w, 8)}


class _Decoder:
    """Field gathers over the compact buffer of all SMF 113 records (``rows`` = record starts)."""

    def __init__(self, buf: bytes, starts: np.ndarray, lens: np.ndarray) -> None:
        self.buf, self.u8, self.starts, self.lens = buf, np.frombuffer(buf, np.uint8), starts, lens
        # all records of one length (the usual file): the buffer is an (n, L) matrix and a row gather is a slice
        L = int(lens[0]) if len(lens) else 0
        self.mat = self.u8.reshape(len(lens), L) if L and len(self.u8) == L * len(lens) else None

    def raw(self, rows: np.ndarray, off: int, w: int) -> np.ndarray:
        if self.mat is not None and off >= 0 and off + w <= self.mat.shape[1]:
            n, L = self.mat.shape
            if len(rows) == n and n and rows[0] == 0 and rows[-1] == (n - 1) * L:   # every row, in order: a view
                return self.mat[:, off:off + w]
            return self.mat[rows // L, off:off + w]
        return self.u8[rows[:, None] + (off + np.arange(w))]

    def be(self, rows: np.ndarray, off: int, w: int) -> np.ndarray:
        if w == 1:
            return self.u8[rows + off].astype(np.uint64)
        return self.raw(rows, off, w).view(f">u{w}").ravel().astype(np.uint64)

    def record(self, i: int) -> bytes:
        s = int(self.starts[i])
        return bytes(self.buf[s:s + int(self.lens[i])])


class _Matrix(_Decoder):
    """Field gathers over one shape's records stacked as an (m, LEN) uint8 matrix (``rows`` = 0)."""

    def __init__(self, mat: np.ndarray, buf=None, base: int = 0, same=(), block: int | None = None) -> None:
        # buf: the map mat views from base; block: bytes of records a gather maps at a time (None: the kernel's)
        self.mat, self.pages = mat, {"buf": buf, "base": base, "same": same, "block": block}

    def text_codes(self, off: int, w: int, words: list[np.ndarray] | None = None) -> tuple[np.ndarray, list[str]]:
        """EBCDIC text field of every row as (code per row, decoded text per code): each distinct value is
        decoded once.  ``words``: the field already gathered as big-endian words (:func:`_text_words`)."""
        codes = _word_codes(words) if words is not None else _row_codes(kernel.dense(self.mat)[:, off:off + w])
        return codes, [common.ebcdic(bytes(self.mat[i, off:off + w])) for i in _firsts(codes)]

    def block(self, off: int, w: int, count: int) -> np.ndarray:
        """(records x count) unsigned values of width ``w`` at ``off``: native uint64, C order."""
        return kernel.gather_be(kernel.dense(self.mat), off, w, count)


def _cat(codes: np.ndarray, labels) -> pd.Categorical:
    """``common.categorical_from_codes`` in the (codes, labels) order the text fields come in."""
    return common.categorical_from_codes(labels, codes)


@functools.lru_cache(maxsize=256)
def _set_names(base: int, count: int) -> tuple[str, ...]:
    """Column names of a set's counters (made once per set size, not per read)."""
    return tuple(counter_name(base + k) for k in range(count))


# counters gathered into one array at most (a block of the frame): a frame's blocks are let go one at a time as
# a copy of the frame is made (app.dataset.adder: the carried samples before a chunk's), so the most held twice
# is a block, 8 counters (1.3 MB of a 20,000-row chunk), not a set (the 60 extended counters of a z16: 9.7 MB)
COUNTER_GROUP = 8


def _decode_shape(dec: _Matrix, sh: L.Shape, want: Collection[str] | None = None, by_column: bool = False
                  ) -> dict[str, np.ndarray | pd.Categorical]:
    """All identity fields and counters of the records of one shape (rows of ``dec.mat``): numbers as numpy
    arrays, text as categoricals, the counter sets as blocks under ``_BLOCKS``; ``want``: the counters to
    decode (None: all); the ``sets`` column still names every set the records carry.  Two passes over blocks of
    rows (the file's pages handed back block by block): the identity fields (the shared spans checked), made
    columns and let go; then each set's counters (those asked for) as one (records x counters) block in row
    order, or (``by_column``: the extract's) as blocks of at most :data:`COUNTER_GROUP` counters in column
    order (each counter's values adjacent: ``kernel.gather_blocks``' ``by_column``), else one by one (issue 24:
    the identity fields' uint64 gather, 0.24x the frame, is never held beside the counters)."""
    c = _identity(dec, sh)
    g = COUNTER_GROUP if by_column else None
    jobs = [(s, names, ks[j:j + g] if g else ks) for s in sh.sets for names in [_set_names(s.base, s.count)]
            for ks in [range(s.count) if want is None else [k for k, name in enumerate(names) if name in want]]
            for j in (range(0, max(1, len(ks)), g) if g else (0,))]
    pre = kernel.gather_blocks(dec.mat, [[(s.offset + k * s.width, s.width) for k in ks] for s, _n, ks in jobs
                                         if ks], **{**dec.pages, "same": ()}, by_column=by_column)
    sets = 0
    blocks = []
    for s, names, ks in jobs:
        if pre and ks:
            blocks.append(([names[k] for k in ks], pre.pop(0)))
        elif len(ks) == s.count and (ks or not g):     # a whole set (by_column: an empty one adds no block)
            blocks.append((list(names), dec.block(s.offset, s.width, s.count)))
        elif ks:             # only the counters asked for: the others are never copied out of the records
            fields = [(s.offset + k * s.width, s.width) for k in ks]
            blocks.append(([names[k] for k in ks], kernel.gather_fields(kernel.dense(dec.mat), fields)))
        sets |= s.bit
    c[_BLOCKS] = blocks
    c["sets"] = np.full(dec.mat.shape[0], sets, dtype=np.int32)
    return c


def _identity(dec: _Matrix, sh: L.Shape) -> dict[str, np.ndarray | pd.Categorical]:
    """The identity columns of :func:`_decode_shape` (numbers in their frame dtypes: nothing left a view of the
    gather, which goes when this returns)."""
    d, dln, m = sh.dof, sh.dln, dec.mat.shape[0]
    c: dict = {}
    if sh.sty == 2:
        f = {"cf": (L.S2_CF, 2), "cls": (L.S2_CLASS, 1), "cfvn": (L.S2_CFVN, 2), "csvn": (L.S2_CSVN, 2),
             "cts": (L.S2_CTS, 8), "ctm": (L.S2_CTM, 8),
             "cpu": (L.S2_CPUID, 2) if dln >= L.S2_CPUID + 2 else (L.S2_CPUN, 1)}
        if dln >= L.S2_CPSP + 4:
            f["cpu_speed"] = (L.S2_CPSP, 4)
    else:
        f = {"cf": (L.S1_FLAGS, 2), "cls": (L.S1_CLASS, 1), "cfvn": (L.S1_CFVN, 2), "csvn": (L.S1_CSVN, 2),
             "cts": (L.S1_CTS, 8), "ctm": (L.S1_CTM, 8), "cpu": (L.S1_CPUID, 2), "cpu_speed": (L.S1_SPEED, 4)}
        if dln >= L.S1_CORE + 2:
            f["core"] = (L.S1_CORE, 2)
    fields = {k: (d + off, w) for k, (off, w) in f.items()}
    fields.update(tme=(L.OFF_TME, 4), dte=(L.OFF_DTE, 4))     # header local time (spec 3), beside the UTC TODs
    texts = {"system": (L.OFF_SID, 4)}
    if sh.sty == 2:
        for name, off, w in (("mt", L.S2_MTYPE, 4), ("model", L.S2_MODEL, 16), ("seq", L.S2_SEQ, 16)):
            if dln >= off + w:
                texts[name] = (d + off, w)
    else:
        texts.update(mt=(d + L.S1_MTYPE, 4), model=(d + L.S1_MODEL, 16))
        if dln >= L.S1_SEQ + 16:
            texts["seq"] = (d + L.S1_SEQ, 16)
    for name, (off, w) in texts.items():
        fields.update(_text_words(name, off, w))
    if sh.ident is not None:      # identification section: the interval as HIS states it (spec 5)
        fields.update(rec_start=(sh.ident + L.ID_START, 8), rec_end=(sh.ident + L.ID_END, 8))
    pre = kernel.gather_blocks(dec.mat, [list(fields.values())], **dec.pages)
    if pre is None and dec.pages["same"]:
        raise kernel.Differ()          # the shared spans could not be checked in the pass
    got = pre.pop(0) if pre else kernel.gather_fields(kernel.dense(dec.mat), list(fields.values()))
    v = {k: got[:, j] for j, k in enumerate(fields)}
    cf, cls = v["cf"], v["cls"]
    for k in ("cpu", "cfvn", "csvn", "flags", "cpu_speed", "core"):     # copies, as the frame will hold them
        c[k] = v["cf" if k == "flags" else k].astype(IDENTITY_COLUMNS[k]) if k in v or k == "flags" else \
            np.full(m, -1 if k == "core" else 0, IDENTITY_COLUMNS[k])
    def text(name: str) -> tuple[np.ndarray, list[str]]:
        if name not in texts:               # a short data section without the field: blank
            return np.zeros(m, np.int64), [""]
        off, w = texts[name]
        return dec.text_codes(off, w, [v[k] for k in _text_words(name, off, w)])

    mt, model, seq = text("mt"), text("model"), text("seq")
    if sh.sty == 2:
        zflag = (cf & L.CF_ZCBP) != 0
        c["lost"], c["mt_lost"] = (cf & L.CF_LOST) != 0, np.zeros(m, bool)
        c["first"], kind = (cf & L.CF_FIRST) != 0, "absolute"
    else:
        zflag = (cf & (L.F1_ZCBP | L.F1_ZCBP_X)) != 0          # spec 7.2: bit 2 (IBM formatter) or bit 3
        c["lost"] = (cf & L.F1_LOST) != 0
        c["mt_lost"] = (cf & L.F1_MTLOST) != 0                   # spec 7.2: bit 1 = lost MT data
        c["first"], kind = np.zeros(m, bool), "delta"
    c["system"] = _cat(*text("system"))
    (mt_codes, mt_labels), (s_codes, s_labels) = mt, seq
    c["machine_type"], c["model"] = _cat(mt_codes, mt_labels), _cat(*model)
    # the class from the class code and the zCBP rule of the machine type (spec 7.2), once per distinct pair
    zrule = np.array([L.zcbp_rule(str(u), False) for u in mt_labels], bool)
    key = cls.astype(np.int64) * 2 + ((zrule[mt_codes] | zflag) & (cls == 2))
    k_codes, k_uniq = pd.factorize(key)
    c["class"] = _cat(k_codes, ["zCBP" if int(k) & 1 else L.class_name(int(k) >> 1, False) for k in k_uniq])
    for col in ("rec_start", "rec_end"):
        if col in v:
            tod = v[col]
            c[col] = np.where(tod == 0, np.datetime64("NaT"), common.tod_to_datetime64(tod)).astype("datetime64[ns]")
    # serial and CEC once per distinct value, not per record
    c["serial"] = _cat(s_codes, [common.normalize_serial(s) for s in s_labels])
    p_codes, p_uniq = pd.factorize(mt_codes * len(s_labels) + s_codes)
    c["cec"] = _cat(p_codes, [common.cec_id(mt_labels[k // len(s_labels)], s_labels[k % len(s_labels)])
                              for k in p_uniq])
    c["run_start"], c["time"] = common.tod_to_datetime64(v["cts"]), common.tod_to_datetime64(v["ctm"])
    c["local_time"] = common.smf_local_datetime64(v["tme"], v["dte"])
    c["kind"] = _cat(np.zeros(m, np.int64), [kind])
    return c


def read_smf(data: bytes, file: str, *, progress: Callable[[float], None] | None = None,
             cancel: Callable[[], bool] | None = None, counters: Collection[str] | None = None,
             by_column: bool = False) -> ReadResult:
    """Decode every SMF 113 subtype 1 and 2 record of ``data``.

    Parameters
    ----------
    data : bytes
        Whole (decompressed) file.  Never modified.
    file : str
        Name used in findings and in the ``source`` column.
    progress : callable, optional
        Called with the fraction done (0..1) about every 1.5 % of the bytes.
    cancel : callable, optional
        Polled every 4096 records and between shapes; when it returns True
        :class:`app.formats.schema.Cancelled` is raised.
    counters : collection of str, optional
        Counter columns to decode (e.g. ``{"B0", "E143"}``); None decodes every
        counter of every set.  The others are not copied out of the records
        (the workspace asks only for what its formulas read: a third of a
        z16 record's counters).  ``sets`` still names every set a record has.
    by_column : bool, optional
        False (the window, the CLI, the engine): a set's counters one block in
        row order (the engine's row gathers copy spans).  True (the extract):
        blocks of :data:`COUNTER_GROUP` counters in column order (issue 24).

    Returns
    -------
    ReadResult
        ``kind='smf'``; never raises for bad data (problems are findings).
    """
    fr = frame_records(data, file, want={113}, cancel=cancel, hand_back=by_column,
                       progress=(lambda f: progress(0.85 * f)) if progress else None)
    fnd = _Findings(file)
    fnd.items.extend(fr.findings)
    recs = fr.records
    total = sum(fr.type_counts.values())
    counts = {"113/1": 0, "113/2": 0, "other": total - len(recs)}
    meta: dict = {"type_counts": {str(k): v for k, v in sorted(fr.type_counts.items())},
                  "other_bytes": fr.other_bytes}
    samples, cols = empty_samples(), None
    if recs:
        try:
            samples, cols = _decode_all(recs, file, fnd, counts, meta, cancel,
                                  None if counters is None else frozenset(counters), by_column)
        except (Cancelled, MemoryError):
            raise                 # read_file turns a MemoryError into one clear 'out of memory' finding
        except Exception as exc:  # noqa: BLE001 - last line of defence: bad data must never raise
            fnd.add(int(recs[0][0]), "error", "decode-failure", f"SMF 113 records could not be decoded "
                    f"({type(exc).__name__}: {exc})", "no counters were read from this file; please report it")
    for off, rty in fr.retyped:
        fnd.add(off, "warning", "damaged-record-type", f"record of type {rty} carries the writer id 'HIS ' of SMF "
                "113 records: its record type byte (offset 5) is most likely damaged", "it was not read as SMF 113 "
                "(counted as another record type); check the file's transfer")
    if not recs and fr.framing in ("rdw", "bdw", "vbs", "double-rdw") and total:
        fnd.add(None, "info", "no-smf113", f"{total} SMF records read, none of type 113",
                "there are no CPU MF counters in this file")
    _summarise(samples, meta, cols)
    if by_column:           # the extract's: the decode's and the checks' temporaries' pages handed back before
        cols = None         # the chunk's frame is written (they would stay resident under it, issue 24)
        memory.trim()
    if progress:
        progress(1.0)
    return ReadResult(file=file, kind="smf", framing=fr.framing, records=counts, samples=samples,
                      findings=fnd.done(), size=len(data), meta=meta)


def _compact(spans: RecordSpans):
    """The records of a clean walk back to back: the file's own bytes when they are the whole file, else one
    join over runs of adjacent records (not one slice per record)."""
    st, en = spans.starts, spans.ends
    cut = np.flatnonzero(st[1:] != en[:-1]) + 1
    a, b = np.r_[st[:1], st[cut]], np.r_[en[cut - 1], en[-1:]]
    if len(a) == 1 and a[0] == 0 and b[0] == len(spans.buf):
        return spans.buf                 # bytes or a read-only mmap of the file: used in place
    mv = memoryview(spans.buf)
    return b"".join(mv[x:y] for x, y in zip(a.tolist(), b.tolist()))


def _decode_all(recs, file, fnd: _Findings, counts, meta, cancel, want: frozenset[str] | None = None,
                by_column: bool = False) -> tuple[pd.DataFrame, _Cols | None]:
    spool_head = None
    if isinstance(recs, RecordSpans):
        file_offs, lens, buf = recs.starts.astype(np.int64), (recs.ends - recs.starts).astype(np.int64), \
            _compact(recs)
    else:                               # a careful walk's (WalkedRecords): offsets, the bytes read on demand
        file_offs, lens = recs.offs, recs.lens
        if by_column and lens.sum() > SPOOL_FROM:
            buf, spool_head = _spooled_records(recs, int(lens.sum()))
            recs.truncate(1)        # the spanned records' joined bytes let go (the first names the file)
            memory.trim()           # (their holes in the heap)
        else:
            buf = b"".join(recs.pieces(0, len(recs)))
    n = len(lens)
    starts = np.zeros(n, np.int64)
    np.cumsum(lens[:-1], out=starts[1:])
    dec = _Decoder(buf, starts, lens)
    ok = lens >= 52
    sty = np.zeros(n, np.int64)
    flg = np.zeros(n, np.int64)
    head = getattr(recs, "head", spool_head)    # the framing walk's (or the spool's) copy of every record's first
                                                # 52 bytes
    if head is not None and head.shape == (n, 52):
        sty[ok] = (head[ok, L.OFF_STY].astype(np.int64) << 8) | head[ok, L.OFF_STY + 1]
        flg[ok] = head[ok, L.OFF_FLG]
    else:
        head = None
        sty[ok] = dec.be(starts[ok], L.OFF_STY, 2)
        flg[ok] = dec.u8[starts[ok] + L.OFF_FLG]
    counts["113/1"], counts["113/2"] = int(np.sum(sty == 1)), int(np.sum(sty == 2))
    counts["other"] += int(n - counts["113/1"] - counts["113/2"])
    short = np.flatnonzero(~ok)
    for i in short[:MAX_DETAIL]:
        fnd.add(int(file_offs[i]), "error", "short-record", f"SMF 113 record of {lens[i]} bytes is shorter than "
                "the 52-byte header and self-defining section", "it was skipped")
    if len(short) > MAX_DETAIL:
        fnd.extra["short-record"] = (int(file_offs[short[MAX_DETAIL]]), len(short) - MAX_DETAIL)
    noflag = np.flatnonzero(ok & ((sty == 1) | (sty == 2)) & ((flg & L.FLG_SUBTYPES) == 0))
    if len(noflag):       # one damaged bit must not lose the record silently: the subtype field is trusted
        fnd.add(int(file_offs[noflag[0]]), "warning", "flag-no-subtype", f"SMF flag byte "
                f"{int(flg[noflag[0]]):02X} lacks X'40' (subtypes used) although the subtype field says "
                f"{int(sty[noflag[0]])}", "the record was read by its subtype field; check the record if its "
                "numbers look wrong", count=len(noflag))
    use = ok & ((sty == 1) | (sty == 2))
    odd = np.flatnonzero(ok & ~use)
    if len(odd):          # subtypes 1 and 2 are the only ones IBM documents for type 113 (spec 3)
        fnd.add(int(file_offs[odd[0]]), "warning", "unknown-subtype", f"SMF 113 record of subtype {int(sty[odd[0]])}: "
                "only subtypes 1 and 2 exist (a damaged subtype field, or a record this version does not know)",
                "it was not read (counted as 'other')", count=len(odd))
    parts: list[tuple[np.ndarray, dict]] = []
    idx_all = np.flatnonzero(use)
    # every record of one length and header layout (the usual file): one group, found without a copy of the bytes
    one = head is not None and len(idx_all) == n and all(bool((head[:, a:b] == head[0, a:b]).all()) for a, b in
                                                         ((0, 2), (22, 52)))
    key1 = None if one else (head if len(idx_all) == n else head[idx_all])[:, np.r_[0:2, 22:52]] if head is not None \
        else np.concatenate([dec.raw(starts[idx_all], 0, 2), dec.raw(starts[idx_all], 22, 30)], axis=1)
    if isinstance(recs, RecordSpans):   # the walk's copy of the heads is not read again: let go before the gathers
        recs.head = None
    head = spool_head = None
    layouts = [np.arange(n)] if one else list(_groups(key1))
    key1 = None             # (the layout keys: not held through the decode)
    for g1 in layouts:
        if cancel is not None and cancel():
            raise Cancelled()
        idx1 = idx_all[g1]
        r0 = dec.record(int(idx1[0]))
        s0, dof, dln = int(sty[idx1[0]]), int.from_bytes(r0[44:48], "big"), int.from_bytes(r0[48:50], "big")
        if dof + min(dln, 60) > len(r0):
            _report(fnd, file_offs[idx1], L.parse_shape(r0))
            continue
        win = (slice(L.S2_CFVN, L.S2_CDON + 2),) if s0 == 2 else (slice(L.S1_V0, L.S1_FLAGS),
                                                                  slice(L.S1_CSOF, L.S1_CSON + 2))
        win = [w for w in win if dof + w.stop <= len(r0) and w.stop <= max(dln, 0) + 0]
        if _one_shape(parts, fnd, meta, file_offs, idx1, dec, [(dof + w.start, w.stop - w.start) for w in win], want,
                      by_column):
            continue
        for g2 in _split(dec, idx1, [(dof + w.start, w.stop - w.start) for w in win], by_column):
            idx2 = idx1[g2]
            r1 = dec.record(int(idx2[0]))
            cs = L.S2_CSOF if s0 == 2 else L.S1_CSOF
            csof = int.from_bytes(r1[dof + cs:dof + cs + 4], "big") if dln >= cs + 8 else 0
            csn = int.from_bytes(r1[dof + cs + 4:dof + cs + 6], "big") * int.from_bytes(r1[dof + cs + 6:dof + cs + 8],
                                                                                       "big") if dln >= cs + 8 else 0
            for g3 in _split(dec, idx2, [(csof, csn)] if 0 < csof and csof + csn <= len(r1) else [], by_column):
                idx = idx2[g3]
                rep = dec.record(int(idx[0]))
                sh = L.parse_shape(rep)
                _report(fnd, file_offs[idx], sh)
                if not sh.fatal:
                    _consistency(fnd, meta, file_offs[idx], rep, s0)
                if not sh.fatal:
                    _decode_guarded(parts, fnd, file_offs, idx, dec, recs, sh, want, by_column)
    # every counter is copied out by now: the pages of a mapped file are handed back (pages.py) before the
    # frame is built, so it does not stack on top of the file in memory
    pages.drop(getattr(recs, "buf", None), 0, len(getattr(recs, "buf", b"")), past=True)
    # the walk's and the grouping's arrays (record starts, lengths, subtypes, layout keys...) and the records'
    # buffer let go before the frame is made: not held beside it (issue 24)
    dec = buf = starts = lens = sty = flg = ok = use = key1 = idx_all = None
    g1 = idx1 = idx2 = idx = None
    return _assemble(parts, file, file_offs, fnd, by_column)


SPOOL_FROM = 4 << 20    # the extract's records of a blocked file joined in a temporary file from this many bytes


def _spooled_records(recs: WalkedRecords, total: int):
    """The records of a walk of blocks (spans of the buffer read, or a spanned record's joined bytes) back to back
    in an unnamed temporary file (``NESTSCOPE_SPOOL_DIR`` or the system's temporary folder), mapped read-only: the
    extract's read of a blocked file (BDW, VBS) then holds neither the join nor the pages of the buffer it read
    beside the decoded frame (issue 24); the pages of the buffer are handed back as the records are copied, the
    map's as the gathers read them (:mod:`app.formats.pages`)."""
    head = np.zeros((len(recs), 52), np.uint8)      # every record's first 52 bytes (zero past a short one's end)
    spool = pages.Spool("nestscope-records-")
    offs, lens = recs.offs, recs.lens
    try:
        for a in range(0, len(recs), 1024):
            b = min(a + 1024, len(recs))
            joined = b"".join(recs.pieces(a, b))
            at = np.zeros(b - a, np.int64)
            np.cumsum(lens[a:b - 1], out=at[1:])
            head[a:b] = kernel.rows_at(joined, at, 52)
            spool.add(joined)
            joined = None
            # (a map's pages: those read; after the last group, those of a folio straddling its end too)
            pages.drop(recs.buf, int(offs[a]), int(offs[b - 1] + lens[b - 1]), past=b == len(recs))
        assert spool.n == total
        return spool.map(), head
    finally:
        spool.close()


def _one_shape(parts: list, fnd: _Findings, meta: dict, file_offs: np.ndarray, idx: np.ndarray, dec: _Decoder,
               spans: list[tuple[int, int]], want, by_column: bool = False) -> bool:
    """The usual file: the records of ``idx`` are one shape (they share the layout fields :func:`_split` compares
    with the first record's); decoded as the loop of :func:`_decode_all` would, in one pass over the records that
    also checks that they are (True); False, having added nothing, when they are not or cannot be so decoded."""
    rep, view = dec.record(int(idx[0])), _stride_view(dec, idx)
    sty, dof, dln = (int.from_bytes(rep[a:b], "big") for a, b in ((L.OFF_STY, L.OFF_STY + 2), (44, 48), (48, 50)))
    cs, has = (L.S2_CSOF if sty == 2 else L.S1_CSOF) + dof, dln >= (L.S2_CSOF if sty == 2 else L.S1_CSOF) + 8
    csof = int.from_bytes(rep[cs:cs + 4], "big") if has else 0
    csn = int.from_bytes(rep[cs + 4:cs + 6], "big") * int.from_bytes(rep[cs + 6:cs + 8], "big") if has else 0
    sh = L.parse_shape(rep)
    if view is None or sh.fatal or not kernel.available():
        return False
    same = spans + ([(csof, csn)] if 0 < csof and csof + csn <= len(rep) else [])
    try:
        c = _decode_shape(_Matrix(view, dec.buf, int(dec.starts[idx[0]]), same, _block(by_column)), sh, want,
                          by_column)
    except (Cancelled, MemoryError):
        raise
    except Exception:  # noqa: BLE001 - kernel.Differ (another shape among them) or a failure: the loop decides
        return False   # (and says) what it is, from the start
    _report(fnd, file_offs[idx], sh)
    _consistency(fnd, meta, file_offs[idx], rep, sty)
    parts.append((idx, c))
    return True


def _decode_guarded(parts: list, fnd: _Findings, file_offs: np.ndarray, idx: np.ndarray, dec: _Decoder, recs,
                    sh: L.Shape, want: frozenset[str] | None, by_column: bool = False) -> None:
    """Decode one shape; a failure costs only the records of that shape (a finding names them), never the file."""
    try:
        mat = _shape_matrix(dec, recs, idx, by_column or formats.GATHER_IN_PLACE)   # (the switch read now)
        if isinstance(mat, kernel.ScatteredRows):       # read from the buffer a block of rows at a time
            pages_at: tuple = (dec.buf, 0)
        else:
            at = mat.__array_interface__["data"][0] - dec.u8.__array_interface__["data"][0]    # a view: its first byte
            pages_at = (dec.buf, at) if 0 <= at < len(dec.u8) else ()
        parts.append((idx, _decode_shape(_Matrix(mat, *pages_at, block=_block(by_column)), sh, want, by_column)))
    except (Cancelled, MemoryError):
        raise
    except (ValueError, IndexError, TypeError, OverflowError) as exc:
        fnd.add(int(file_offs[idx[0]]), "error", "decode-failure", f"SMF 113 record could not be decoded "
                f"({type(exc).__name__}: {exc})", "it was skipped; the other records of the file were read; please "
                "report it", count=len(idx))


def _split(dec: _Decoder, idx: np.ndarray, spans: list[tuple[int, int]], scatter: bool = False):
    """Yield index arrays (into ``idx``) of the records with equal bytes in ``spans`` (their layout fields),
    first-seen order: one group at once when they all share the first record's bytes (checked in one pass over
    the records in place), else grouped through a copy of the spans (:func:`_groups`), or (``scatter``: the
    extract's read) through the spans gathered a block of records at a time where they are."""
    spans = [(o, w) for o, w in spans if w > 0]
    view = _stride_view(dec, idx)
    if not spans or (view is not None and kernel.first_other_row(view, spans) < 0):
        yield np.arange(len(idx))
        return
    # a copy of the records would not be read below (the spans are gathered from the buffer): only the extract's
    # records where they are (``scatter``)
    mat = _shape_matrix(dec, None, idx, scatter) if view is None and scatter else None
    if isinstance(mat, kernel.ScatteredRows):     # the spans as 8-byte words, read a block of records at a time
        fields = [(o + k, min(8, w - k)) for o, w in spans for k in range(0, w, 8)]
        got = kernel.gather_blocks(mat, [fields], block=_block(scatter))
        if got is not None:
            found = list(_code_groups(_word_codes([got[0][:, j] for j in range(len(fields))])))
            got = mat = None    # (the gathered spans: not held while the caller decodes each group)
            yield from found
            return
    found = list(_groups(np.concatenate([dec.raw(dec.starts[idx], o, w) for o, w in spans], axis=1)))
    yield from found


def _block(by_column: bool) -> int | None:
    """Bytes of records the gathers map at a time: the extract's (``by_column``) smaller blocks, else the kernel's."""
    return kernel.EXTRACT_BLOCK_BYTES if by_column else None


def _stride_view(dec: _Decoder, idx: np.ndarray) -> np.ndarray | None:
    """The records ``idx`` (all of one length) as an (m, length) uint8 view of the compact buffer when they
    follow each other at a constant stride (the usual case), else None."""
    st = dec.starts[idx]
    L = int(dec.lens[idx[0]])
    m = len(idx)
    if m == 1 or (L > 0 and np.all(np.diff(st) == st[1] - st[0]) and st[1] - st[0] >= L):
        step = int(st[1] - st[0]) if m > 1 else L
        base = dec.u8[int(st[0]):]
        if (m - 1) * step + L <= len(base):
            return np.lib.stride_tricks.as_strided(base, shape=(m, L), strides=(step, 1), writeable=False)
    return None


SCATTER = True          # the extract's records of a shape not at one stride read where they are (False: copied)


def _shape_matrix(dec: _Decoder, recs, idx: np.ndarray, scatter: bool = False
                  ) -> np.ndarray | kernel.ScatteredRows:
    """The records ``idx`` (all of one length) as an (m, length) uint8 matrix: a view of the compact buffer
    when they follow each other at a constant stride (the usual case); else, for the extract (``scatter``) and
    compiled, the records where they are (:class:`app.formats.kernel.ScatteredRows`: gathered a block of rows
    at a time, issue 24: a chunk of subtype 1 and 2 records no longer holds a copy of each shape's records and
    every page of the chunk beside the decoded frame; 25-50 % more CPU, so the window's read keeps the copy);
    else a copy (one row gather over the compact buffer's windows of the records' length, not one slice per
    record)."""
    view = _stride_view(dec, idx)
    if view is not None:
        return view
    if scatter and SCATTER and kernel.available() and len(idx) and bool((np.diff(dec.starts[idx]) > 0).all()):
        return kernel.ScatteredRows(dec.buf, dec.starts[idx], int(dec.lens[idx[0]]))
    return np.lib.stride_tricks.sliding_window_view(dec.u8, int(dec.lens[idx[0]]))[dec.starts[idx]]


def _consistency(fnd: _Findings, meta: dict, offs: np.ndarray, rep: bytes, sty: int) -> None:
    """Spec 10 item 6 on the first record of each shape: a field that does not fit is a warning naming the
    record's file offset and the field; the records still decode through their self-describing offsets."""
    bad = L.consistency_check(rep)
    res = meta.setdefault("consistency", {})
    if not bad:
        res.setdefault(f"113/{sty}", "ok")
        return
    res[f"113/{sty}"] = "; ".join(f"{name} {what}" for _o, name, what in bad)
    for rel, name, what in bad:
        fnd.add(int(offs[0]), "warning", "inconsistent-record", f"subtype {sty} field {name} at record offset "
                f"{rel}: {what}", "the record does not follow IBM's SMF 113 layout in this field; its counters were "
                "still read through the record's own offsets and lengths: check the values", count=len(offs),
                field=name)


def _report(fnd: _Findings, offs: np.ndarray, sh: L.Shape) -> None:
    for sev, code, what, meaning in sh.problems:
        fnd.add(int(offs[0]), sev, code, what, meaning, count=len(offs))


def _assemble(parts, file: str, file_offs: np.ndarray, fnd: _Findings, by_column: bool = False
              ) -> tuple[pd.DataFrame, _Cols | None]:
    """One sample frame in file order from the decoded shapes (usually one), checked, with its columns; the
    counters of several shapes (or out of order) copied into one block in row order, or (``by_column``) into
    blocks of :data:`COUNTER_GROUP` counters in column order."""
    if not parts:
        return empty_samples(), None
    cat_idx = np.concatenate([p[0] for p in parts])
    perm = np.argsort(cat_idx, kind="stable")          # rows of the shapes one after the other -> file order
    in_order = bool((np.diff(cat_idx) > 0).all())
    idx = cat_idx[perm]
    n = len(idx)

    done: dict[str, Any] = {}

    def joined(col: str, dtype: str):
        if col in done:                 # (the SMF system id is both columns lpar and system)
            return done[col]
        have = [c.pop(col, None) for _, c in parts]     # each shape's column let go as it is joined
        done[col] = out = _joined(have, col, dtype)
        return out

    def _joined(have: list, col: str, dtype: str):
        if dtype == "category":
            vals = [h if h is not None else _cat(np.zeros(len(i), np.int64), [""]) for (i, _), h in zip(parts, have)]
            v = vals[0] if len(vals) == 1 else union_categoricals(vals, sort_categories=True)
            return v if in_order else v.take(perm)
        fill = np.datetime64("NaT") if dtype.startswith("datetime") else 0
        vals = [np.asarray(h) if h is not None else np.full(len(i), fill, dtype) for (i, _), h in zip(parts, have)]
        v = vals[0] if len(vals) == 1 else np.concatenate(vals)
        return (v if in_order else v[perm]).astype(dtype, copy=False)

    names = dict.fromkeys(k for _, c in parts for bn, _b in c[_BLOCKS] for k in bn)
    cols = {"source": _cat(np.zeros(n, np.int64), [file]), "offset": file_offs[idx]}
    for col, dtype in IDENTITY_COLUMNS.items():
        if col in ("source", "offset"):
            continue
        if col == "lpar":
            cols[col] = joined("system", dtype)       # z/OS: the LPAR is named by its SMF system id
        elif col == "os":
            cols[col] = _cat(np.zeros(n, np.int64), ["z/OS"])
        else:
            cols[col] = joined(col, dtype)
    opt = [k for k in OPTIONAL_COLUMNS if any(k in c for _, c in parts)]
    for k in opt:
        cols[k] = joined(k, "datetime64[ns]")
    cnames = sorted(names, key=lambda s: int(s[1:]))
    where = {k: j for j, k in enumerate(cnames)}
    if len(parts) == 1 and in_order and cnames and [k for bn, _ in parts[0][1][_BLOCKS] for k in bn] == cnames:
        ctr = parts[0][1][_BLOCKS]          # one shape, counters in order: its blocks side by side, no copy
    else:
        rank = np.full(len(file_offs), -1, np.int64)
        rank[idx] = np.arange(n)
        if by_column:
            # absent sets stay 0 (schema); the counters in blocks of COUNTER_GROUP, each counter's values adjacent
            # a group at a time, each shape's block let go once all its counters are copied: the shapes' blocks
            # and the frame's are never both held whole (issue 24: a file of subtype 1 and 2 records)
            g = COUNTER_GROUP
            ctr = []
            for j0 in range(0, len(cnames), g):
                f = np.zeros((min(g, len(cnames) - j0), n), np.uint64)
                for i, c in parts:
                    pos, blocks = rank[i], c[_BLOCKS]
                    for bi, (bn, b) in enumerate(blocks):
                        if b is None:
                            continue
                        for jb, k in enumerate(bn):
                            if j0 <= where[k] < j0 + g:
                                f[where[k] - j0, pos] = b[:, jb]
                        if not bn or max(where[k] for k in bn) < j0 + g:
                            blocks[bi] = (bn, None)
                        b = None
                ctr.append((cnames[j0:j0 + g], f.T))
                f = None
                memory.trim()           # the shapes' blocks under the mapping threshold: their holes given back
        else:
            full = np.zeros((n, len(cnames)), np.uint64)   # absent sets stay 0 (schema)
            for i, c in parts:
                pos = rank[i]
                for bn, b in c[_BLOCKS]:
                    if bn:
                        at = np.array([where[k] for k in bn], np.int64)
                        if at[-1] - at[0] == len(at) - 1 and (np.diff(at) == 1).all():   # adjacent: a slice
                            full[pos, at[0]:at[-1] + 1] = b
                        else:
                            full[pos[:, None], at[None, :]] = b
            ctr = [(cnames, full)]
        full = None
        c = b = None                    # (the loop's last shape and block: not held past the copy)
    parts.clear()           # the shapes' gathers (their identity fields as uint64) let go before the frame is made
    # the extract's frame holds the identity columns as they are (no consolidated copy beside the arrays the
    # checks read: issue 24); the window's its usual consolidated blocks
    df = pd.DataFrame(cols, copy=False) if by_column else pd.DataFrame(cols)
    df = pd.concat([df] + [pd.DataFrame(b, columns=bn, copy=False) for bn, b in ctr], axis=1)
    keep = ("offset", "cpu", "time", "sets", "cfvn", "csvn")    # the numbers the checks read (the frame has copies)
    cols = {k: v for k, v in cols.items() if k in keep or isinstance(v, pd.Categorical)}
    return check_samples(df, fnd, _Cols(df, cols))
