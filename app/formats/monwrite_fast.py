"""The clean fast path of the MONWRITE reader.

A clean file (every control record valid, every record header plausible, every P-bit series closed in its interval,
counter fields plausible) is read in two steps: a tight loop that only records the offset of each monitor record,
then numpy gathers of the fields of all records of one kind.  Anything the careful walk
(:class:`app.formats.monwrite._Walk`) would report as a finding makes these raise :class:`_Irregular`, and the
careful walk reads the file instead, so results are identical either way.  ``w`` below is that walk's state.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from app.formats import monwrite_records as R
from app.formats.common import tod_to_datetime64
from app.formats.monwrite_blocks import _MFC_FIXED, _MT_NAMES, _NAMES, _P_BIT, _block_ok, _control_entries, _hdr_ok
from app.formats.monwrite_records import build_mt
from app.formats.schema import SET_MT, Cancelled, empty_samples

if TYPE_CHECKING:                      # the careful walk's state, the ``w`` of every function here
    from app.formats.monwrite import _Walk


# A clean file (every control record valid, every record header plausible, every P-bit series closed in
# its interval, counter fields plausible) is read in two steps: a tight loop that only records the offset
# of each monitor record, then numpy gathers of the fields of all records of one kind.  Anything the
# careful walk (_Walk) would report as a finding makes the fast path give up (None), and the careful walk
# reads the file instead, so results are identical either way.

class _Irregular(Exception):
    """The fast path met something only the careful walk handles."""


def _be(u: np.ndarray, p: np.ndarray, k: int) -> np.ndarray:
    """Big-endian unsigned k-byte integers (k = 1, 2 or 4) at byte offsets ``p`` of ``u`` (int64): one
    gather per alignment residue over a '>u{k}' view of the bytes."""
    if k == 1:
        return u[p].astype(np.int64)
    dt = ">u2" if k == 2 else ">u4"
    n = len(u)
    res = p & (k - 1)
    out = np.empty(len(p), np.int64)
    for r in np.flatnonzero(np.bincount(res, minlength=k)).tolist():
        view = np.frombuffer(u, dt, count=(n - r) // k, offset=r)
        sel = res == r
        if sel.all():
            return view[(p - r) // k].astype(np.int64)
        out[sel] = view[(p[sel] - r) // k]
    return out


def _frame_records(w: _Walk) -> tuple[np.ndarray, np.ndarray]:
    """Offsets of every monitor record in stream order and the record indexes after each sample D1R11.

    A Python loop over the control records only; the records are walked on all 4 KB frames at once (each
    frame of an entry starts a record chain at its first byte, the first frame at the entry start), one
    numpy step per record position in a frame."""
    data, n = w.data, len(w.data)
    page = R.PAGE
    pg: list[int] = []              # per entry: stream offset of its first page, pages, start, end, sample
    npg: list[int] = []
    first: list[int] = []
    last: list[int] = []
    smp: list[bool] = []
    off, nblk = 0, 0
    while off < n:
        nblk += 1
        if nblk % 16 == 0 and w.cancel is not None and w.cancel():
            raise Cancelled()
        if n - off < page:
            raise _Irregular
        ents = _control_entries(data, off)
        if ents is None:
            raise _Irregular
        claimed = off + page + sum(((t >> 12) - (s >> 12) + 1) * page for _f, _a, _b, s, t in ents)
        if claimed != n and not _block_ok(data, claimed):
            raise _Irregular
        pos = off + page
        for fl, _d1, _d2, s, t in ents:
            k = (t >> 12) - (s >> 12) + 1
            if w.mode is None and s & 0xFFF:
                if not _hdr_ok(data, pos + (s & 0xFFF), s):
                    raise _Irregular
                w.mode = "page"
            pg.append(pos)
            npg.append(k)
            first.append(s & 0xFFF)
            last.append((t & 0xFFF) + 1)
            smp.append(fl == R.ENTRY_SAMPLE)
            pos += k * page
            if pos > n:
                raise _Irregular
        off = pos
    u = np.frombuffer(data, np.uint8)
    npg_a = np.asarray(npg, np.int64)
    if not len(npg_a):
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    ent = np.repeat(np.arange(len(npg_a)), npg_a)
    k0 = np.zeros(len(npg_a), np.int64)
    np.cumsum(npg_a[:-1], out=k0[1:])
    inent = np.arange(len(ent)) - k0[ent]                  # page number inside its entry
    base = np.asarray(pg, np.int64)[ent] + inent * page    # stream offset of each frame
    loc = np.where(inent == 0, np.asarray(first, np.int64)[ent], 0)
    end = np.where(inent == npg_a[ent] - 1, np.asarray(last, np.int64)[ent], page)
    sample = np.asarray(smp, bool)[ent]
    idx = np.flatnonzero(loc < end)
    fos, d11 = [], []
    while len(idx):
        li = loc[idx]
        if np.any(li + R.HDR_LEN > page):
            raise _Irregular
        fo = base[idx] + li
        ln, z = _be(u, fo, 2), _be(u, fo + 2, 2)
        dom, rc = u[fo + 4], _be(u, fo + 6, 2)
        if np.any((ln < R.HDR_LEN) | (z != 0) | (dom > R.MAX_DOMAIN) | (li + ln > page)):
            raise _Irregular
        fos.append(fo)
        d1 = dom == 1
        d11.append(d1 & (rc == 11) & sample[idx])
        jump = d1 & (rc == 13)
        nl = np.where(jump, page, li + ln)
        loc[idx] = nl
        e = end[idx]
        go = nl < e
        if np.any(~go & ~jump & (nl != e) & (nl != page)):
            raise _Irregular                            # last record runs past the entry end
        idx = idx[go]
    fo = np.concatenate(fos)
    order = np.argsort(fo, kind="stable")
    fo = fo[order]
    marks = np.flatnonzero(np.concatenate(d11)[order]) + 1
    return fo, marks




_KNOWN = np.array(sorted(d * 65536 + r for d, r in _NAMES), dtype=np.int64)


def _gather(w: _Walk, fo: np.ndarray, marks: np.ndarray) -> dict:
    data = w.data
    u = np.frombuffer(data, np.uint8)
    ln = _be(u, fo, 2)
    dom = u[fo + 4].astype(np.int64)
    flg = u[fo + 5].astype(np.int64)
    rc = _be(u, fo + 6, 2)
    key = dom * 65536 + rc
    iv = np.searchsorted(marks, np.arange(len(fo)), side="right")
    w.interval = len(marks)
    known = np.isin(key, _KNOWN)
    if np.any(~known & ((rc == 13) | (rc == 20))):      # maybe a damaged domain byte: careful walk decides
        raise _Irregular
    if np.any((dom == 1) & (rc == 13) & (ln != R.HDR_LEN)):
        raise _Irregular                                  # a D1R13 of the wrong length: damaged header
    keys, cnt = np.unique(key, return_counts=True)
    w.counts = {(int(k) >> 16, int(k) & 0xFFFF): int(c) for k, c in zip(keys, cnt)}
    # rare records, in file order, as the careful walk decodes them
    for i in np.flatnonzero(((dom == 1) & ((rc == 4) | (rc == 5))) | ((dom == 0) & ((rc == 15) | (rc == 16)))).tolist():
        f, L, d, r = int(fo[i]), int(ln[i]), int(dom[i]), int(rc[i])
        if d == 1 and r == 4:
            if w.sys is None:
                w.sys = R.decode_d1r4(data[f:f + L]) | {"offset": f}
        elif d == 1:
            cpu, typ, core = R.decode_d1r5(data[f:f + L])
            w.cpu_cfg[cpu] = (typ, core)
        elif r == 16:
            pass                                          # D0R16: gathered below (_gather_d0r16)
        elif L > R.CUG_NPAR:
            w.npar = data[f + R.CUG_NPAR]
    w.interval = len(marks)
    out = {"mfc": _gather_mfc(w, u, fo, ln, dom, flg, rc, iv)}
    out["d0r2"] = _gather_d0r2(w, u, fo[(dom == 0) & (rc == 2)], ln[(dom == 0) & (rc == 2)])
    c16 = (dom == 0) & (rc == 16)
    out["d0r16"] = _gather_d0r16(u, fo[c16], ln[c16], iv[c16])
    return out


def _gather_d0r16(u: np.ndarray, p: np.ndarray, L: np.ndarray, iv: np.ndarray) -> dict:
    """D0R16 records -> per-CPU entries merged per (interval, partition) as :func:`build_partitions` merges
    them; irregular (short record, implausible CPU entry layout, one CPU twice) -> careful walk."""
    if np.any(L < R.CUP_FIXED):
        raise _Irregular
    ncpu, cpuof, cpuln = u[p + 30].astype(np.int64), _be(u, p + 32, 2), _be(u, p + 34, 2)
    has = ncpu > 0
    if np.any(has & ((cpuln < 38) | (cpuof < R.CUP_FIXED))):
        raise _Irregular
    avail = np.where(L > cpuof, (L - cpuof) // np.maximum(cpuln, 1), 0)
    if np.any(has & (avail < ncpu)):
        raise _Irregular
    names: dict[bytes, str] = {}
    lpar = []
    for b in (u[q + 20:q + 28].tobytes() for q in p.tolist()):
        t = names.get(b)
        if t is None:
            t = names[b] = R.ebcdic(b)
        lpar.append(t)
    pnum = u[p + 28].astype(np.int64)
    hdr_tod, ptod = _be_u64(u, p + 8), _be_u64(u, p + 36)
    htod = np.where(ptod != 0, ptod, hdr_tod)
    # merged keys (interval, lpar, pnum) in order of first appearance, tod/htod of their first record
    code = {}
    kid = np.fromiter((code.setdefault((i, nm, q), len(code)) for i, nm, q in
                       zip(iv.tolist(), lpar, pnum.tolist())), np.int64, len(p))
    nkeys = len(code)
    first_rec = np.full(nkeys, len(p), np.int64)
    np.minimum.at(first_rec, kid, np.arange(len(p)))
    rec = np.repeat(np.arange(len(p)), ncpu)
    k0 = np.zeros(len(p), np.int64)
    np.cumsum(ncpu[:-1], out=k0[1:])
    e = p[rec] + cpuof[rec] + (np.arange(len(rec)) - k0[rec]) * cpuln[rec]
    cpu = _be(u, e, 2)
    ekey = kid[rec]
    if len(np.unique(ekey * 65536 + cpu)) != len(rec):
        raise _Irregular                                  # one CPU twice in a partition's interval
    order = np.lexsort((np.arange(len(rec)), ekey))       # key order, then record order (= insertion order)
    e, rec, cpu, ekey = e[order], rec[order], cpu[order], ekey[order]
    typ = np.ascontiguousarray(np.lib.stride_tricks.sliding_window_view(u, 16)[e + 22]) if len(e) else \
        np.zeros((0, 16), np.uint8)
    utyp, tinv = np.unique(typ.view("V16").ravel(), return_inverse=True)
    tclass = [R.type_class(R.ebcdic(bytes(t)).upper()) for t in utyp.tolist()]
    ktod = hdr_tod[first_rec]
    khtod = htod[first_rec]
    kl = [None] * nkeys
    for (i, nm, q), k in code.items():
        kl[k] = (nm, q)
    return {"nkeys": nkeys, "key_interval": np.asarray([k[0] for k in code], np.int64),
            "key_lpar": kl, "key_tod": ktod, "key_has": np.bincount(ekey, minlength=nkeys) > 0,
            "tod": ktod[ekey], "htod": khtod[ekey], "lpar": [kl[k][0] for k in ekey.tolist()],
            "pnum": np.asarray([kl[k][1] for k in ekey.tolist()], np.int64), "cpu": cpu,
            "weight": _be(u, e + 2, 2), "flags": u[e + 4].astype(np.int64), "actm": _be_u64(u, e + 6),
            "lptm": _be_u64(u, e + 14), "class": [tclass[t] for t in tinv.ravel().tolist()]}


def _int_column(v: np.ndarray) -> np.ndarray:
    """uint64 values as pandas infers Python ints: int64 when they all fit, else uint64."""
    return v.astype(np.int64) if not len(v) or int(v.max()) < 2**63 else v


def _fast_partitions(w: _Walk, ident: dict):
    """:func:`build_partitions` for a fast walk."""
    d = w.fast["d0r16"]
    if w.npar is not None and d["nkeys"]:
        seen = int(np.bincount(np.unique(d["key_interval"], return_inverse=True)[1].ravel()).max())
        if seen != w.npar:
            w.find(None, "info", "partition-count", f"D0R15 reports {w.npar} partitions, D0R16 records "
                   f"describe {seen}", "Global Performance Data may be disabled on the HMC")
    empty = [[ident["cec"], nm, q, "", 0, 0, False, np.nan, int(t), np.nan]
             for (nm, q), t, h in zip(d["key_lpar"], d["key_tod"].tolist(), d["key_has"].tolist()) if not h]
    df = None
    if len(d["cpu"]):
        df = pd.DataFrame({"tod": _int_column(d["tod"]), "htod": _int_column(d["htod"]), "lpar": d["lpar"],
                           "pnum": d["pnum"], "cpu": d["cpu"], "weight": d["weight"], "flags": d["flags"],
                           "actm": _int_column(d["actm"]), "lptm": _int_column(d["lptm"]), "class": d["class"]},
                          columns=R.ENTRY_COLUMNS)
    return R.partitions_frame(w, ident, df, empty)


def _gather_mfc(w: _Walk, u, fo, ln, dom, flg, rc, iv) -> dict:
    sel = np.flatnonzero((dom == 5) & ((rc == 13) | (rc == 20)))
    p, L = fo[sel], ln[sel]
    if np.any(L < _MFC_FIXED):
        raise _Irregular
    cpu, mask = _be(u, p + 20, 2), _be(u, p + 28, 2)
    cfvn, csvn, coff, clen = _be(u, p + 32, 2), _be(u, p + 34, 2), _be(u, p + 36, 2), _be(u, p + 38, 2)
    if np.any((coff < _MFC_FIXED) | (coff + clen > L) | (clen % 8 != 0) | (cfvn < 1) | (cfvn > 8)
              | (csvn < 1) | (csvn > 8)):
        raise _Irregular
    mt = rc[sel] == 20
    cont = (flg[sel] & _P_BIT) != 0
    m = len(sel)
    # series: per (cpu, mt) in file order, a record without the P bit closes the series
    order = np.lexsort((np.arange(m), mt, cpu))
    gk = (cpu * 2 + mt)[order]
    newgrp = np.ones(m, bool)
    newgrp[1:] = gk[1:] != gk[:-1]
    c_o = cont[order]
    start = newgrp.copy()
    start[1:] |= ~c_o[:-1]
    if m and (c_o[-1] or np.any(c_o[np.flatnonzero(newgrp[1:])])):
        raise _Irregular                                  # a series still open at the end of the file
    sid_o = np.cumsum(start) - 1
    first_o = np.flatnonzero(start)                       # sorted position of each series' first record
    last_o = np.flatnonzero(~c_o)                         # ... and last record (same count: checked above)
    if len(first_o) != len(last_o):
        raise _Irregular
    fr, la = order[first_o], order[last_o]
    for a in (mask, cfvn, csvn):
        if np.any(a[order] != a[fr][sid_o]):
            raise _Irregular                              # mask/CFVN/CSVN change inside a series
    ivs = iv[sel]
    if np.any(ivs[fr] != ivs[la]):
        raise _Irregular                                  # series cut by an interval end
    # series in completion order (position of the last record), pieces in file order inside each
    rank_of = np.empty(len(la), np.int64)
    done = np.argsort(la, kind="stable")
    rank_of[done] = np.arange(len(la))
    piece_rank = rank_of[sid_o]
    porder = np.lexsort((order, piece_rank))              # pieces sorted by (series rank, file position)
    pidx = order[porder]
    blen = np.bincount(piece_rank, weights=clen[order], minlength=len(la)).astype(np.int64)
    npieces = np.bincount(piece_rank, minlength=len(la)).astype(np.int64)
    pfirst = np.zeros(len(la), np.int64)
    np.cumsum(npieces[:-1], out=pfirst[1:])
    f, lst = fr[done], la[done]
    return {"mt": mt[f], "interval": ivs[lst], "off": p[f], "cpu": cpu[f], "speed": _be(u, p[f] + 24, 4),
            "mask": mask[f], "cfvn": cfvn[f], "csvn": csvn[f], "tod": _be_u64(u, p[f] + 8),
            "flg": flg[sel][f], "blen": blen, "pstart": (p + coff)[pidx], "pk": clen[pidx] // 8,
            "pfirst": pfirst, "npieces": npieces}


def _put_series_words(data, s: dict, idx: np.ndarray, full: np.ndarray, rows: np.ndarray, c0: int) -> bool:
    """Counter words of the series ``idx`` (all of one byte length, same piece sizes) straight into
    ``full[rows, c0:c0 + words]``: each piece column block is one row gather over a sliding-window view
    of the file.  False (nothing written) when the series are not cut into pieces the same way."""
    npc, pfirst, pk, pstart = s["npieces"][idx], s["pfirst"][idx], s["pk"], s["pstart"]
    if not np.all(npc == npc[0]):
        return False
    for j in range(int(npc[0])):
        if np.any(pk[pfirst + j] != pk[pfirst[0] + j]):
            return False
    contiguous = len(rows) > 0 and rows[-1] - rows[0] == len(rows) - 1 and bool(np.all(np.diff(rows) == 1))
    r0 = int(rows[0]) if len(rows) else 0
    n = len(data)
    col = c0
    for j in range(int(npc[0])):
        q = int(pk[pfirst[0] + j])
        st = pstart[pfirst + j]
        res = st & 7
        ures = np.flatnonzero(np.bincount(res, minlength=8)).tolist()
        for r in ures:
            view = np.frombuffer(data, ">u8", count=(n - r) // 8, offset=r)
            win = np.lib.stride_tricks.sliding_window_view(view, q)
            if len(ures) == 1:
                src = win[(st - r) >> 3]
                if contiguous:
                    full[r0:r0 + len(rows), col:col + q] = src
                else:
                    full[rows, col:col + q] = src
            else:
                sel = res == r
                full[rows[sel], col:col + q] = win[(st[sel] - r) >> 3]
        col += q
    return True


def _series_words(data, s: dict, idx: np.ndarray) -> np.ndarray:
    """Counter words of the series ``idx`` (all of one byte length) as a (series, words) array, pieces
    joined series by series (the general case, when :func:`_put_series_words` cannot be used)."""
    npc, pfirst, pk, pstart = s["npieces"][idx], s["pfirst"][idx], s["pk"], s["pstart"]
    k = int(s["blen"][idx[0]]) // 8
    mv = memoryview(data)
    parts = []
    for a, c in zip(pfirst.tolist(), npc.tolist()):
        parts.extend(mv[st:st + 8 * q] for st, q in zip(pstart[a:a + c].tolist(), pk[a:a + c].tolist()))
    return np.frombuffer(b"".join(parts), ">u8").reshape(len(idx), k)


def _be_u64(u: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Big-endian 8-byte unsigned integers at byte offsets ``p`` of ``u`` (uint64)."""
    n = len(u)
    res = p & 7
    out = np.empty(len(p), np.uint64)
    for r in np.flatnonzero(np.bincount(res, minlength=8)).tolist():
        view = np.frombuffer(u, ">u8", count=(n - r) // 8, offset=r)
        sel = res == r
        out[sel] = view[(p[sel] - r) // 8]
    return out


def _gather_d0r2(w: _Walk, u, p, L) -> dict:
    if np.any(L < R.MT_CORE + 2):
        raise _Irregular                                  # short D0R2: the careful decoder
    cpu = _be(u, p + R.PRP2_CPU, 2)
    typ = u[p + R.PRP2_CPUTY].astype(np.int64)
    core = _be(u, p + R.MT_CORE, 2)
    vals = np.stack([_be(u, p + o, 4) for _n, o in R.MT_FIELDS], axis=1) if len(p) else \
        np.zeros((0, len(R.MT_FIELDS)), np.int64)
    # last D0R2 per CPU (dict order: first appearance), as the careful walk keeps it
    ucpu, first = np.unique(cpu, return_index=True)
    last = len(cpu) - 1 - np.unique(cpu[::-1], return_index=True)[1]
    for k in np.argsort(first, kind="stable").tolist():
        i = int(last[k])
        c = int(core[i])
        d = {"cpu": int(ucpu[k]), "type": int(typ[i]), "core": None if c == 0xFFFF else c}
        for j, name in enumerate(_MT_NAMES):
            v = int(vals[i, j])
            d[name] = None if v == R.MT_NA else v / R.MT_SCALE
        w.prp[d["cpu"]] = d
    has = np.any(vals != R.MT_NA, axis=1)
    return {"tod": _be_u64(u, p[has] + 8), "cpu": cpu[has], "type": typ[has], "core": core[has],
            "vals": vals[has]}


def _fast_samples(w: _Walk, ident: dict, file: str):
    """:func:`build_samples` for a fast walk (series as arrays); same rows, columns and findings."""
    s = w.fast["mfc"]
    core_of, type_of = R._cpu_maps(w)
    first_of_core: dict[int, int] = {}
    for cpu, core in core_of.items():
        first_of_core[core] = min(cpu, first_of_core.get(core, cpu))
    mt, blen, cpu, iv = s["mt"], s["blen"], s["cpu"], s["interval"]
    mask, cfvn, csvn = s["mask"], s["cfvn"], s["csvn"]
    sets = np.zeros(len(mt), np.int64)
    keep = np.zeros(len(mt), bool)
    groups: list[tuple[np.ndarray, list[int], list[int] | None]] = []     # (series, numbers, positions)
    nm = np.flatnonzero(~mt)
    if len(nm):
        combo = (mask[nm] << 48) | (cfvn[nm] << 40) | (csvn[nm] << 32) | blen[nm]   # blen < 2**32
        ucombo, inv = np.unique(combo, return_inverse=True)
        inv = inv.ravel()
        for k, c in enumerate(ucombo.tolist()):
            mk, cf, cs, bl = c >> 48, (c >> 40) & 0xFF, (c >> 32) & 0xFF, c & 0xFFFFFFFF
            nums = R.counter_numbers(mk, cf, cs)
            if bl == 8 * len(nums):
                pos = None
            elif bl == R.CCFDATA_BYTES:
                pos = nums
            else:
                raise _Irregular                          # counter-length finding: careful path
            if not nums:
                continue
            idx = nm[inv == k]
            keep[idx] = True
            sets[idx] = sum(b for b in R.CSET_ORDER if mk & b and R.set_size(b, cf, cs))
            groups.append((idx, nums, pos))
    rows_c = np.flatnonzero(keep)                         # D5R13 rows, in series order
    rkey = iv[rows_c] * 65536 + cpu[rows_c]
    if len(np.unique(rkey)) != len(rkey):
        raise _Irregular                                  # two D5R13 of one CPU in one interval
    mi = np.flatnonzero(mt & (blen > 0))
    dropped = 0
    new_rows = np.zeros(0, np.int64)
    mt_row = np.zeros(0, np.int64)
    if len(mi):
        for c in np.unique((cfvn[mi] << 40) | (csvn[mi] << 32) | blen[mi]).tolist():
            cf, cs, bl = c >> 40, (c >> 32) & 0xFF, c & 0xFFFFFFFF
            if bl != 8 * R.set_size(SET_MT, cf, cs):
                raise _Irregular                          # mt-length finding: careful path
        ucpu = np.unique(cpu[mi])
        drop_cpu = [c for c in ucpu.tolist() if c in core_of and first_of_core[core_of[c]] != c]
        dropm = np.isin(cpu[mi], drop_cpu)
        dropped = int(dropm.sum())
        mi = mi[~dropm]
        srt = np.argsort(rkey, kind="stable")
        mkey = iv[mi] * 65536 + cpu[mi]
        j = np.searchsorted(rkey[srt], mkey)
        j = np.minimum(j, max(len(srt) - 1, 0))
        hit = (rkey[srt][j] == mkey) if len(srt) else np.zeros(len(mi), bool)
        new_rows = mi[~hit]
        mt_row = np.empty(len(mi), np.int64)
        mt_row[hit] = srt[j[hit]]
        mt_row[~hit] = len(rows_c) + np.arange(len(new_rows))
    if dropped:
        w.find(None, "info", "mt-thread-dedup", f"{dropped} D5R20 records of non-thread-0 CPUs not stored",
               "MT-diagnostic counters are core-wide; each core keeps the values of its thread-0 CPU")
    row_series = np.concatenate([rows_c, new_rows])
    n = len(row_series)
    if n == 0:
        return empty_samples()
    row_of = np.full(len(mt), -1, np.int64)
    row_of[rows_c] = np.arange(len(rows_c))
    rsets = np.concatenate([sets[rows_c], np.zeros(len(new_rows), np.int64)])
    rsets[mt_row] |= SET_MT
    if len(mi):
        for bl in np.unique(blen[mi]).tolist():
            sel = blen[mi] == bl
            groups.append((mi[sel], R.mt_numbers(0, 0, bl), None))
    numbers = sorted({x for _i, nums, _p in groups for x in nums})
    col_of = {x: j for j, x in enumerate(numbers)}
    full = np.zeros((n, len(numbers)), dtype=np.uint64)
    mrow = np.full(len(mt), -1, np.int64)
    mrow[mi] = mt_row
    for idx, nums, pos in groups:
        rows = np.where(mt[idx], mrow[idx], row_of[idx])
        cidx = np.asarray([col_of[x] for x in nums])
        if pos is None and len(cidx) and np.all(np.diff(cidx) == 1) and \
                _put_series_words(w.data, s, idx, full, rows, int(cidx[0])):
            continue
        arr = _series_words(w.data, s, idx)
        if pos is not None:
            arr = arr[:, pos]
        full[rows[:, None], cidx[None, :]] = arr
    cols = {k: s[k][row_series] for k in ("off", "cpu", "speed", "cfvn", "csvn", "tod", "flg")}
    cols["sets"] = rsets
    return R.samples_frame(w, ident, file, cols, numbers, full, core_of, type_of)


def _fast_mt(w: _Walk, ident: dict):
    """:func:`build_mt` for a fast walk."""
    d = w.fast["d0r2"]
    n = len(d["cpu"])
    if not n:
        return build_mt(w, ident)                         # no MT rows: the empty frame
    core_of, _type_of = R._cpu_maps(w)
    cpus = d["cpu"]
    utyp, tinv = np.unique(d["type"], return_inverse=True)
    classes = np.array([R.type_class(int(t)) for t in utyp.tolist()], dtype=object)[tinv.ravel()].tolist()
    ucpu, cinv = np.unique(cpus, return_inverse=True)
    fallback_core = np.array([core_of.get(int(c), -1) for c in ucpu.tolist()], dtype=np.int64)[cinv.ravel()]
    core = np.where(d["core"] == 0xFFFF, fallback_core, d["core"])
    data = {"time": tod_to_datetime64(d["tod"]), "system": [ident["system"]] * n,
            "cpu": cpus.astype(np.int32), "core": core.astype(np.int32), "class": classes}
    for c in R.MT_COLUMNS[5:12]:
        v = d["vals"][:, _MT_NAMES.index(c)]
        data[c] = np.where(v == R.MT_NA, np.nan, v / R.MT_SCALE)
    data["lpar"], data["cec"] = [ident["lpar"]] * n, [ident["cec"]] * n
    return pd.DataFrame(data, columns=R.MT_COLUMNS)


