"""One source file added to a dataset a chunk of decoded records at a time (issue 24: bounded memory).

:class:`FileAdder` takes the :class:`~app.formats.schema.ReadResult` of each chunk
(:func:`app.formats.chunks.read_chunks`) in turn: the chunk's samples the dataset does not hold yet, their
intervals and partition rows are written as part files at once, and only small summaries (counts, time range,
systems, findings) are kept until :meth:`FileAdder.finish` writes the file's one manifest entry, the commit.

Until then the parts written are *pending*: :meth:`app.dataset.Dataset.parts` lists them to this process only,
so the dedup look-ups of a later chunk (:mod:`app.dataset.dedup`) see the earlier chunks as if they were in the
dataset already.  A running total's previous sample across a chunk boundary is thus the context of the next
chunk's first interval, a record repeated in two chunks is kept once, and an interval of an earlier chunk that
a later one computes again with another start (records out of time order) is taken out of its pending part,
rewritten in place (a committed part goes through a compaction record, as before).  The caller holds the
dataset lock (:mod:`app.dataset.lock`) from the first chunk to the commit; on any exception every pending
part is removed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from app.dataset import integrity, tables

__all__ = ["FileAdder"]


class FileAdder:
    """Adds one file (``sha``: the content hash, its manifest entry's name, or a
    :class:`~app.dataset.content_hash.ContentHash` being made) to ``ds`` chunk by chunk."""

    def __init__(self, ds, file: str, sha: str, size: int, sets) -> None:
        from app.dataset.store import interval_counters

        self.ds, self.file, self.size, self.sets = ds, file, int(size), sets
        self._sha, self._hash = (sha, None) if isinstance(sha, str) else (None, sha)
        self.need = interval_counters(sets)
        self.written: list[str] = []
        self.parts: dict[str, list[str]] = {t: [] for t in tables.TABLES}
        self.part_keys: dict[str, dict[str, Any]] = {}
        self.counters: set[str] = set()
        self.findings: list = []
        self.samples = self.iv_rows = self.dup = self.pdup = self.superseded = self.all_samples = 0
        self.t_first = self.t_last = None
        self.kind, self.framing = "smf", ""
        self.records: dict[str, int] = {}
        self.readable = False
        self.systems: dict[tuple, dict[str, set]] = {}
        self.chunks = 0
        self.carry: pd.DataFrame | None = None      # samples of the last time of the chunk before
        self.tail: pd.DataFrame | None = None       # the last sample of each CPU written so far (context)
        # intervals written that end at a context sample after their chunk (key, t, t0, _file, as
        # app.dataset.dedup.stored_intervals): a later chunk in time order computes them again
        self.ahead = pd.DataFrame(columns=["cec", "lpar", "system", "class", "cpu", "t", "t0", "_file"])
        self.largest_chunk = 0          # rows of the largest decoded chunk
        ds._pending = self.part_keys

    @property
    def sha(self) -> str:
        """The content hash; one still being made (:class:`~app.dataset.content_hash.ContentHash`) is waited for
        here, where it is first needed, and looked up in the manifest: :class:`AlreadyPresent` when the dataset
        holds it (nothing of the file was written yet: every part file's name and rows carry it)."""
        if self._sha is None:
            from app.dataset.content_hash import AlreadyPresent

            sha = self._hash.result()
            if self.ds._committed(sha):
                raise AlreadyPresent(sha)
            self._sha = sha
        return self._sha

    # -- one chunk -----------------------------------------------------------------------------------
    def add(self, r, last: bool = True, own: bool = False) -> None:
        """Add the decoded chunk ``r`` (its samples and partition rows the dataset does not hold yet); ``last``:
        no chunk follows (else the samples of its last time wait for the next one); ``own``: ``r`` is the
        reader's and goes with this call, so its samples frame is let go here (``r.samples`` left empty) and
        freed as soon as the chunk's copies are made, not when the next chunk is read."""
        from app.dataset import dedup
        from app.dataset.store import _months

        self.chunks += 1
        if self.chunks == 1:
            self.kind, self.framing = r.kind, r.framing
        elif "vbs" in r.framing.lower() and "vbs" not in self.framing.lower():
            self.framing = r.framing        # a chunk of blocks without a spanned record reads as BDW
        for k, v in (r.records or {}).items():
            self.records[k] = self.records.get(k, 0) + int(v)
        self.readable |= bool(r.readable)
        self.findings.extend(r.findings)
        all_samples = r.samples
        if own:
            r.samples = all_samples.iloc[:0].copy()     # a fresh empty frame (a slice would hold the block)
        self.largest_chunk = max(self.largest_chunk, len(all_samples))
        pframe, pdup = dedup.new_rows(self.ds, "partitions", r.partitions)
        self.pdup += pdup
        if pframe is not None and len(pframe):
            pf = pframe.assign(sha256=self.sha, source=pframe.get("source", self.file),
                               month=_months(tables.ns_of(pframe["time"])))
            self._write("partitions", pf)
        self._summary(all_samples)
        if len(all_samples):
            # the samples of the chunk's last time wait for the next chunk: a cut inside one time's records
            # would leave CPUs missing at the chunk's end (the engine's checks would say they went offline)
            if self.carry is None:
                frame = all_samples
                del all_samples         # the frame alone holds the chunk: its counters go as their deltas are made
            else:
                box = [all_samples]
                del all_samples         # the box holds the chunk alone: its copy after the carry lets go of it
                frame = self._after_carry(box)
            if last:
                self.carry = None
            else:
                t = frame["time"].to_numpy(dtype="datetime64[ns]")
                end = t == t.max()
                k = len(end) - int(end.sum())
                if not end[:k].any():       # the last time's rows end the frame (records in time order): the
                    # rest is a view of the chunk, not a second copy of it; the carry a copy of its own rows
                    self.carry = frame.iloc[k:].copy().reset_index(drop=True)
                    frame = frame.iloc[:k].reset_index(drop=True)
                else:
                    self.carry = frame.loc[end].reset_index(drop=True)
                    frame = frame.loc[~end].reset_index(drop=True)      # the whole chunk's copy freed here
            box = [frame]
            del frame                   # the box holds the chunk's frame alone: _samples lets go of it
            self._samples(box)
        elif last and self.carry is not None:
            carry, self.carry = self.carry, None
            self._samples([carry])

    def _after_carry(self, box: list[pd.DataFrame]) -> pd.DataFrame:
        """The carried samples, then the samples of the chunk in ``box`` (taken out, let go as it is copied:
        :func:`_concat_releasing`) they do not hold already (the reader keeps a record repeated inside one chunk
        once; a record repeated across chunks, e.g. a dump holding the same records twice, meets the carried
        copy here, where no part file holds either yet)."""
        from app.dataset import dedup

        frame = _concat_releasing(self.carry, box)
        # the identity's own columns: a category is one string, a time one instant (as their text and int64 ns)
        again = frame[dedup.SAMPLE_KEY + ["time"]].duplicated().to_numpy()
        if again.any():
            self.dup += int(again.sum())
            frame = frame.loc[~again].reset_index(drop=True)
        return frame

    def _samples(self, box: list[pd.DataFrame]) -> None:
        """Write the samples of the frame in ``box`` the dataset does not hold yet and their intervals.  The
        frame is taken out of ``box`` so that it is freed once its samples part is made (bounded memory).

        The samples part is written first, before the intervals are computed (the chunk's samples and their
        intervals are not both in memory beside a part's Parquet buffers), but listed (made visible to the
        dedup look-ups as a pending part) only after: the intervals' context look-up must not see the chunk's
        own samples as stored ones."""
        from app.dataset import dedup
        from app.dataset.store import _months

        frame = box.pop()
        if not len(frame):
            return
        # in time order after the earlier chunks (the usual case): they need not be looked up, their last
        # sample of each CPU is the context; else their pending parts are read as the dataset's
        ends = dedup.CpuEnds(frame)     # per CPU its first and last sample: the rows grouped once for both
        fast = dedup.in_order(self.tail, frame, ends)
        self.ds._pending_visible = not fast
        later: list[tuple] = []
        try:
            held: list[pd.DataFrame] = []
            samples, dup = dedup.new_rows(self.ds, "samples", frame, held)     # counted once: by identity
            self.dup += dup
            if samples is not frame:
                ends = None     # (of the frame before its held rows went: it would hold that frame on)
            del frame
            iv = eng = drop = keep = rows = None
            if len(samples):
                s = samples
                if not self.ds.keep_samples:   # the counters intervals are computed from; the rest stay NULL
                    s = s.drop(columns=[c for c in s.columns if tables.is_counter(c) and c not in self.need])
                s = s.assign(sha256=_one_name(self.sha, len(s)), **{tables.OFFSET: tables.record_offsets_s(s)},
                             source=_names(s["source"]),                            # NaN offset: none stated
                             month=_months(s["time"].to_numpy(dtype="datetime64[ns]").view(np.int64), True))
                self._write("samples", s, tables.sample_counters(s.columns), later)
                del s
                tail = dedup.tail_of(self.tail, samples, self.sha, ends)
                # each CPU's first time (the settling of the intervals): of the same grouping, made now, then
                # the frame let go (``ends`` holds it)
                firsts = dedup.first_times_of(ends) if (ends is not None and ends.frame is samples
                                                        and self.tail is not None) else None
                ends = None
                n_new = len(samples)
                box = [samples]
                del samples     # handed over: _intervals lets go of the samples' counters once they are used
                iv, eng, drop, keep, rows = self.ds._intervals(box, self.file, self.sets,
                                                                self.tail if fast else None,
                                                                self.ahead if fast else None, self.sha,
                                                                held[0] if held else None, firsts)
                self.tail = tail
            else:
                n_new = 0
        finally:
            self.ds._pending_visible = True
        self._list(later)
        if n_new:
            self.findings.extend(eng)       # the engine's; the plausibility check's after the intervals' write
            if drop is not None and len(drop):
                # first the superseded intervals go (a kill here leaves a gap the next extract of this file fills)
                self._supersede(drop)
            if drop is not None and len(drop) and len(self.ahead):
                gone = dedup._isin(self.ahead, drop, dedup.INTERVAL_KEY + ["t", "t0"])
                self.ahead = self.ahead.loc[~gone].reset_index(drop=True)
            n_iv = len(iv) if keep is None else len(keep)      # the rows to add: ``keep`` of ``iv`` (None: all)
            if n_iv:
                ahead = iv["_sha"].notna().to_numpy()     # ending at a context sample (after this chunk's)
                if keep is not None:
                    ahead = ahead[keep]
                ivf, _ = self.ds._interval_frame(iv, self.sha, keep)
                del iv
                from app.dataset.store import _counter_sort_key
                all_counters = sorted(self.need | set(rows.counters), key=_counter_sort_key)
                self.iv_rows += n_iv
                # every interval row's deltas made now, in the order the parts are written, the chunk's samples
                # counters let go a block at a time as theirs are made: the samples' counters are not held
                # through the parts' writing beside a row group's deltas (the extract's peak), and each row
                # group's deltas are a view of the one block
                order = _part_order(ivf, keep)
                _trim()         # the engine step's and the interval frame's freed temporaries: pages back first
                rows.make_all(released=_trim, order=order)
                del order
                where = self._write("intervals", ivf, all_counters, take=keep, deltas=rows)
                self.counters |= {c for c, v in zip(rows.counters, rows.valued) if v}
                if ahead.any():                # what a later chunk in time order must see as stored
                    at = np.flatnonzero(ahead) if keep is None else keep[ahead]
                    a = ivf[dedup.INTERVAL_KEY + ["t_end", "t_start", "month"]].iloc[at]
                    k = dedup._key_frame(a, dedup.INTERVAL_KEY, "t_end")
                    k["t0"] = tables.ns_of(a["t_start"])
                    k["_file"] = [str(self.ds.root / where[(c, m)]) for c, m in zip(a["cec"], a["month"])]
                    self.ahead = pd.concat([self.ahead, k], ignore_index=True)
            # the check's findings (its marks are written): of the rows not written too (tested now)
            self.findings.extend(f for f in rows.findings() if f.file == self.file)
            rows = None
            self.samples += n_new

    def _summary(self, all_samples: pd.DataFrame) -> None:
        if len(all_samples):
            self.all_samples += len(all_samples)
            lo, hi = all_samples["time"].min(), all_samples["time"].max()
            self.t_first = lo if self.t_first is None else min(self.t_first, lo)
            self.t_last = hi if self.t_last is None else max(self.t_last, hi)
            self._systems(_distinct(all_samples[["cec", "machine_type", "lpar", "system", "os", "class", "cpu"]]))

    def _systems(self, ident: pd.DataFrame) -> None:
        """Add the distinct (system, class, cpu) rows ``ident`` to :attr:`systems`: per (cec, machine type, lpar,
        system, os) and class the CPUs, names as ``astype(str)`` gives them; a row with a missing name is left
        out, as a groupby leaves it out (a missing class: its system is listed, without that row).  A row a CPU, in Python (a groupby of a few rows cost more)."""
        from app.dataset.dedup import _text

        names = [_text(ident[c]).tolist() for c in ("cec", "machine_type", "lpar", "system", "os", "class")]
        for *key, cls, cpu in zip(*names, ident["cpu"].astype("int64").tolist()):
            if all(isinstance(v, str) for v in key):
                classes = self.systems.setdefault(tuple(key), {})      # (a system whose rows name no class: none)
                if isinstance(cls, str):
                    classes.setdefault(cls, set()).add(int(cpu))

    def _write(self, table: str, frame: pd.DataFrame, counters=(), later: list | None = None,
               take: np.ndarray | None = None, deltas=None) -> dict[tuple[str, str], str]:
        """One part per (cec, month) of ``frame`` (of its rows ``take``: None, all); returns their paths
        (relative) by (cec, month).  ``later``: the parts are listed (pending, seen by the dedup look-ups, in
        the manifest entry) only when :meth:`_list` is given it; until then only removal on failure knows them.
        A part's rows are gathered from ``frame`` as they are written, a row group at a time (no copy)."""
        where = {}
        n = len(frame) if take is None else len(take)
        for (cec, month), idx in _part_groups(frame, take):
            rows = (None if take is None else take) if len(idx) == n else (idx if take is None else take[idx])
            rel = self.ds._write_part(table, str(cec), month, self.sha, frame, counters, rows, deltas)
            self.written.append(rel)
            entry = (table, rel, {"cec": str(cec), "month": month, **self.ds._part_check(rel, len(idx))})
            if later is None:
                self._list([entry])
            else:
                later.append(entry)
            where[(str(cec), month)] = rel
        return where

    def _list(self, entries: list[tuple]) -> None:
        for table, rel, key in entries:
            self.parts[table].append(rel)
            self.part_keys[rel] = key

    def _supersede(self, drop: pd.DataFrame) -> None:
        """Remove stored intervals a chunk computed again with another start: a committed part is rewritten
        through a compaction record, a pending part of this file in place."""
        from app.dataset import compact

        for part, g in drop.groupby("_file", sort=True):
            gone = pd.MultiIndex.from_frame(g[["lpar", "system", "class", "cpu", "t"]].astype(
                {"lpar": str, "system": str, "class": str, "cpu": np.int64, "t": np.int64}))

            def keep(tbl, gone=gone):
                f = tbl.select(["lpar", "system", "class", "cpu", "t_end"]).to_pandas()
                k = pd.MultiIndex.from_arrays([f["lpar"].astype(str), f["system"].astype(str), f["class"].astype(str),
                                               f["cpu"].astype(np.int64), tables.ns_of(f["t_end"])])
                return ~k.isin(gone)
            if self._pending_rel(str(part)) in self.part_keys:
                self._rewrite_pending(self._pending_rel(str(part)), keep)
            else:
                compact.rewrite(self.ds, "intervals", str(part), keep)
                self.superseded += len(g)

    def _pending_rel(self, part: str) -> str | None:
        p, root = Path(part), self.ds.root
        for a, b in ((p, root), (p.resolve(), root.resolve())):
            try:
                return a.relative_to(b).as_posix()
            except ValueError:
                continue
        return None

    def _rewrite_pending(self, rel: str, keep) -> None:
        import pyarrow.parquet as pq

        path = self.ds.root / rel
        tbl = pq.read_table(path)
        mask = np.asarray(keep(tbl), dtype=bool)
        gone = int((~mask).sum())
        if not gone:
            return
        self.iv_rows -= gone
        tmp = path.with_name(".tmp-" + path.name)
        tables.write_part(tbl.filter(mask), tmp)
        os.replace(tmp, path)
        self.part_keys[rel] = {**self.part_keys[rel], **self.ds._part_check(rel, int(mask.sum()))}

    # -- the commit ----------------------------------------------------------------------------------
    def finish(self):
        """Write the manifest entry (the commit); returns the :class:`~app.dataset.store.ExtractResult`."""
        from app.dataset.store import ExtractResult, _iso, _now_iso

        if self.carry is not None:
            carry, self.carry = self.carry, None
            self._samples([carry])
        ds, file, sha = self.ds, self.file, self.sha
        sev: dict[str, int] = {}
        for f in self.findings:
            sev[f.severity] = sev.get(f.severity, 0) + 1
        systems = [{"cec": k[0], "machine_type": k[1], "lpar": k[2], "system": k[3], "os": k[4],
                    "classes": {c: len(v) for c, v in sorted(cls.items())}} for k, cls in sorted(self.systems.items())]
        entry = {"sha256": sha, "name": Path(file).name, "path": os.path.abspath(file), "size": self.size,
                 "kind": self.kind, "framing": self.framing, "records": self.records,
                 "readable": bool(self.readable and self.all_samples),
                 "samples": int(self.samples), "intervals": int(self.iv_rows),
                 "samples_counters": "all" if ds.keep_samples else "intervals",
                 "samples_held_already": int(self.dup), "partition_rows_held_already": int(self.pdup),
                 "intervals_superseded": int(self.superseded),
                 "time_first": _iso(self.t_first), "time_last": _iso(self.t_last),
                 "findings": len(self.findings), "findings_by_severity": sev,
                 "findings_sample": [f.message for f in self.findings[:20]],
                 "systems": systems, "interval_counters": sorted(self.counters, key=_sort_key),
                 "parts": self.parts, "part_keys": self.part_keys, "extracted_at": _now_iso()}
        if self.chunks > 1:
            entry["chunks"] = self.chunks
        entry = json.loads(json.dumps(entry, default=str))      # sealed as it reads back
        entry["seal"] = integrity.seal_entry(entry)
        ds._pending = {}
        if not ds._commit(sha, entry):
            if ds._index is not None:
                ds._index.refresh()
            self.abort()
            return ExtractResult(file, sha, "present", f"{file}: already in the dataset (extracted by another "
                                 "process at the same time)")
        if ds._index is not None:
            ds._index.add(entry)
        n_find, dup = len(self.findings), self.dup
        status = "added" if entry["readable"] else "unreadable"
        msg = (f"{file}: {self.samples} samples, {self.iv_rows} intervals, {n_find} finding(s)" if entry["readable"]
               else f"{file}: no counter data ({n_find} finding(s)); recorded in the manifest")
        if dup and entry["readable"]:
            msg += f"; {dup} sample(s) the dataset held already (from other files) not added again"
            if not self.samples and not self.iv_rows:
                status = "present"
                msg = f"{file}: every sample ({dup}) is in the dataset already (from other files); nothing added"
        if entry["intervals_superseded"]:
            msg += f"; {entry['intervals_superseded']} stored interval(s) spanning this file's samples replaced"
        return ExtractResult(file, sha, status, msg, int(self.samples), int(self.iv_rows), n_find, entry)

    def abort(self) -> None:
        """Remove every part written so far (nothing was committed)."""
        self.ds._pending = {}
        self.ds._remove(self.written)


class CheckedDeltas:
    """The :class:`~app.engine.counter_blocks.DeltaRows` of an intervals frame ``iv`` with
    :func:`app.engine.plausibility.check` done as its rows are made: each range of rows a writer asks for
    (:func:`app.dataset.tables.write_frame`, a row group at a time) is tested at once
    (:func:`~app.engine.plausibility.suspects`, then the check on the rows it finds alone), and their ``qbits``
    (:attr:`own_columns`: the column the writer takes from here, not from the frame) marked before the group is
    written: each chunk's deltas are made once, not once for the test and again for the write.  A row's test
    reads that row alone, so the marks are those of the check of the whole frame; :meth:`findings` (after the
    write) tests the rows no writer asked for and gives the check's findings of the rows that break a bound,
    the same as those of the whole frame with its counters.  ``iv`` as the engine made it: the findings name
    its rows as they are now (a later change of ``iv``'s names is not seen: copy on write)."""

    _ROWS = 4096                        # rows tested at a time by :meth:`findings`

    def __init__(self, iv: pd.DataFrame, later, sets) -> None:
        cols = list(iv.columns)
        extra = cols[cols.index("qbits") + 1:]          # the UTC offsets: read as the eager check reads the
        self.names = later.counters + extra             # columns after qbits
        self.later, self.sets, self.counters = later, sets, later.counters
        self.valued: np.ndarray | None = None           # kept by a writer (app/dataset/store.py, _write_part)
        # what the check and its findings read of a row (not the bucket columns: let go with ``iv``)
        keep = [c for c in ("source", "offset", "system", "class", "cpu", "interval_end", "generation",
                            "cpu_speed", "interval_s", "qbits", "quality") if c in cols] + extra
        self.iv = iv[keep]
        self.base = iv[["generation", "cpu_speed", "interval_s"]]
        self.more = {c: iv[c].to_numpy(dtype=np.float64) for c in extra}
        self.qbits = iv["qbits"].to_numpy(dtype=np.int64).copy()
        self.own_columns = {"qbits": self.qbits}
        self.tested = np.zeros(len(iv), bool)
        self.sus = np.zeros(len(iv), bool)

    _MADE_ROWS = 8192                   # rows tested at a time once every row's deltas are made

    def make_all(self, released=None, order: np.ndarray | None = None) -> None:
        """:meth:`DeltaRows.make_all <app.engine.counter_blocks.DeltaRows.make_all>`: every row's deltas made at
        once, the samples' counters let go as they are used; then every row tested and marked, a range of
        consecutive rows at a time (views of the deltas: no copy, and a few tests a chunk, not one for each run
        of consecutive rows a writer's row group takes)."""
        self.later.make_all(released, order)
        if self.later.made:
            n = len(self.tested)
            for a in range(0, n, self._MADE_ROWS):
                self._test(*self.later.made_rows(a, min(n, a + self._MADE_ROWS)))

    def rows(self, idx: np.ndarray | slice) -> np.ndarray:
        """:meth:`DeltaRows.rows <app.engine.counter_blocks.DeltaRows.rows>`, the rows tested and marked."""
        m = self.later.rows(idx)
        if self.later.made:                 # every row tested already (make_all)
            return m
        self._test(np.arange(len(self.tested))[idx] if isinstance(idx, slice) else np.asarray(idx, np.int64), m)
        return m

    def _test(self, at: np.ndarray, m: np.ndarray) -> None:
        from app.engine.plausibility import check, suspects

        if not len(at):
            return
        cols = {c: m[:, j] for j, c in enumerate(self.counters)} | {c: v[at] for c, v in self.more.items()}
        sus = suspects(self.base.iloc[at], self.sets, self.names, cols)
        self.tested[at] = True
        if sus.any():
            idx = at[sus]
            self.sus[idx] = True
            sub = pd.concat([self.iv.iloc[idx].reset_index(drop=True),
                             pd.DataFrame(m[sus], columns=self.counters, copy=False)], axis=1)
            check(sub, self.sets, self.names)
            self.qbits[idx] = sub["qbits"].to_numpy(dtype=np.int64)

    def findings(self) -> list:
        """The check's findings over every row (those not written tested now: their marks are not written)."""
        from app.engine.plausibility import check

        rest = np.flatnonzero(~self.tested)
        for a in range(0, len(rest), self._ROWS):
            at = rest[a:a + self._ROWS]
            self._test(at, self.later.rows(at))
        if not self.sus.any():
            return []
        idx = np.flatnonzero(self.sus)
        return check(_with(self.iv.iloc[idx], self.later, idx), self.sets, self.names)


def _with(frame: pd.DataFrame, later, rows) -> pd.DataFrame:
    """``frame`` (rows ``rows`` of an intervals frame) with its counters from ``later``."""
    return pd.concat([frame.reset_index(drop=True),
                      pd.DataFrame(later.rows(rows), columns=later.counters, copy=False)], axis=1)


def _part_order(frame: pd.DataFrame, take: np.ndarray | None) -> np.ndarray:
    """The rows of ``frame`` (of its rows ``take``: None, all) in the order :meth:`FileAdder._write` writes them:
    part by part ((cec, month) in order), each part's rows in their order; None when that is every row of the
    frame in its own order (``make_all``'s order None: the same block, each part's rows a range of it)."""
    got = [idx for _k, idx in _part_groups(frame, take)]
    order = np.concatenate(got) if got else np.zeros(0, np.int64)
    if take is None and _in_order(order):
        return None     # the frame's own order (one part, the usual chunk): no order nor inverse held, nor rows taken
    out = order if take is None else np.asarray(take)[order]
    return out.astype(np.int32) if len(out) < 2**31 - 1 else out      # (make_all holds it narrow: no 2nd copy)


def _part_groups(frame: pd.DataFrame, take: np.ndarray | None) -> list[tuple[tuple, np.ndarray]]:
    """The parts of ``frame``'s rows ``take`` (None: all): ((cec, month), their positions in ``take``) in the
    order and with the rows of ``groupby(["cec", "month"], observed=True, sort=True).indices`` (a row with
    either missing in none), found on the two columns' category codes when both are categoricals (a chunk's
    are: one CEC, a month or two), else by that groupby."""
    cec, month = frame["cec"], frame["month"]
    if not (isinstance(cec.dtype, pd.CategoricalDtype) and isinstance(month.dtype, pd.CategoricalDtype)):
        keys = frame[["cec", "month"]] if take is None else frame[["cec", "month"]].iloc[take]
        return list(keys.groupby(["cec", "month"], observed=True, sort=True).indices.items())
    cc, mc = cec.cat.codes.to_numpy(), month.cat.codes.to_numpy()
    if take is not None:
        cc, mc = cc[take], mc[take]
    width = len(month.cat.categories) + 1
    key = cc.astype(np.int64) * width + mc
    ok = (cc >= 0) & (mc >= 0)          # (a missing CEC or month: in no group, as the groupby leaves it out)
    if ok.all() and len(key) and (key == key[0]).all():     # one part (the usual chunk): every row
        parts = [(int(key[0]), np.arange(len(key)))]
    else:
        at = np.flatnonzero(ok)
        order = at[np.argsort(key[at], kind="stable")]
        ks = key[order]
        cut = np.flatnonzero(ks[1:] != ks[:-1]) + 1
        parts = [(int(ks[a]), order[a:b]) for a, b in zip(np.r_[0, cut], np.r_[cut, len(ks)]) if b > a]
    ccats, mcats = cec.cat.categories, month.cat.categories
    return [((ccats[k // width], mcats[k % width]), idx) for k, idx in parts]


def _in_order(order: np.ndarray) -> bool:
    """``order`` is 0, 1, 2, ... (the rows as they are)."""
    return not len(order) or (int(order[0]) == 0 and bool((np.diff(order) == 1).all()))


def _trim() -> None:
    """The C heap's free pages handed back (blocks of a chunk's counters under the mapping threshold are freed into
    the heap, whose holes the deltas made in their place do not reuse: one block of their own)."""
    from app import memory

    memory.release(collect=False)


def _distinct(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame.drop_duplicates()`` (the first row of each distinct one, in order), found over one int64 key a row
    made of the category codes and integers of its columns (mixed radix) when every column is a categorical or
    an integer and the key fits (else pandas')."""
    if not len(frame):
        return frame
    key = np.zeros(len(frame), np.int64)
    room = 1
    for c in frame.columns:
        s = frame[c]
        if isinstance(s.dtype, pd.CategoricalDtype):
            v, base = s.cat.codes.to_numpy().astype(np.int64) + 1, len(s.cat.categories) + 1    # -1 (missing): 0
        elif s.dtype.kind in "iu":
            v = s.to_numpy().astype(np.int64)
            lo = int(v.min())
            v, base = v - lo, int(v.max()) - lo + 1
        else:
            return frame.drop_duplicates()
        room *= base
        if room >= 1 << 62:
            return frame.drop_duplicates()
        key = key * base + v
    _, first = np.unique(key, return_index=True)
    return frame.take(np.sort(first))


def _one_name(name: str, n: int) -> pd.Categorical:
    """``name`` on ``n`` rows as a categorical (written as the same strings, made once)."""
    return pd.Categorical.from_codes(np.zeros(n, np.int8), categories=pd.Index([name], dtype="str"))


def _names(s: pd.Series):
    """``s.astype(str)`` as a categorical of string categories when ``s`` is a categorical without missing
    values (each category converted once; the part file holds the same strings), else ``s.astype(str)``."""
    if isinstance(s.dtype, pd.CategoricalDtype) and not (s.cat.codes.to_numpy() < 0).any():
        cats = s.cat.categories.astype(str)
        if cats.is_unique:
            return pd.Categorical.from_codes(s.cat.codes.to_numpy(), categories=cats, validate=False)
    return s.astype(str)


def _concat(a: pd.DataFrame, b: pd.DataFrame) -> pd.DataFrame:
    """``a`` then ``b`` (same columns); categorical columns stay categorical."""
    out = pd.concat([a, b], ignore_index=True)
    for c in b.columns:
        if isinstance(b[c].dtype, pd.CategoricalDtype) and not isinstance(out[c].dtype, pd.CategoricalDtype):
            out[c] = out[c].astype("category")
    return out


def _concat_column(a: pd.Series, b: pd.Series) -> pd.Series:
    """One column of :func:`_concat` (``a`` then ``b``, a categorical stays categorical)."""
    out = _joined(a.array, b.array)
    if out is not None:
        return pd.Series(out, copy=False)
    out = pd.concat([a, b], ignore_index=True)
    if isinstance(b.dtype, pd.CategoricalDtype) and not isinstance(out.dtype, pd.CategoricalDtype):
        out = out.astype("category")
    return out


def _joined(x, y):
    """``x`` then ``y`` (a column's arrays) as what pandas' concat of them gives, made from the arrays (a quarter
    of a millisecond a column less): two numpy arrays of one dtype (numbers, booleans, naive times), or two
    categoricals of the same categories in the same order (a chunk's names and the carried samples'), joined
    by their codes; None for any other pair (pandas' concat then)."""
    if isinstance(x, pd.arrays.DatetimeArray) and x.tz is None:
        x = np.asarray(x)           # (a naive time's values: its datetime64 array, no copy)
    if isinstance(y, pd.arrays.DatetimeArray) and y.tz is None:
        y = np.asarray(y)
    if isinstance(x, pd.arrays.NumpyExtensionArray):
        x = x.to_numpy()
    if isinstance(y, pd.arrays.NumpyExtensionArray):
        y = y.to_numpy()
    if isinstance(x, np.ndarray) and isinstance(y, np.ndarray):
        if x.dtype == y.dtype and x.dtype.kind in "biumM" and x.ndim == y.ndim == 1:
            return np.concatenate([x, y])
        return None
    if (isinstance(x, pd.Categorical) and isinstance(y, pd.Categorical) and x.ordered == y.ordered
            and x.categories.dtype == y.categories.dtype and x.categories.equals(y.categories)):
        return pd.Categorical.from_codes(np.concatenate([x.codes, y.codes]), dtype=y.dtype, validate=False)
    return None


def _concat_releasing(a: pd.DataFrame, box: list[pd.DataFrame]) -> pd.DataFrame:
    """:func:`_concat` of ``a`` and the frame in ``box`` (taken out), whose counters are copied a column at a
    time into blocks of :data:`_BLOCK` counters of the result (each counter's values adjacent), each let go as
    it is copied: once the
    frame is gone, its counter blocks are held only by their columns' arrays, so each block (the SMF reader's:
    at most 8 counters) is freed once its last column is copied and the chunk and its copy after the carried
    samples are never both held whole (issue 24: 2 x the chunk was the extract's peak).  The same frame as
    ``_concat``: columns in ``b``'s order, the counters' values and dtypes; the other columns (the identity's:
    a quarter of a chunk) by ``_concat``.  Frames whose columns or counter dtypes differ: ``_concat`` as it is.
    A frame the caller still holds is copied the same way (and stays as it was)."""
    b = box.pop()
    order = list(b.columns)
    arrays = tables._numpy_columns(b)           # the frame's own arrays (views of its blocks)
    counters = [c for c in order if tables.is_counter(c) and c in arrays and arrays[c].dtype == np.uint64]
    ident = order[:len(order) - len(counters)]
    mine = tables._numpy_columns(a)
    if (not counters or not b.columns.is_unique or list(a.columns) != order
            or order[len(ident):] != counters or any(c not in mine or mine[c].dtype != np.uint64 for c in counters)):
        return _concat(a, b)                    # (counters after the identity columns: the reader's order)
    # the identity columns (each its own array: the SMF reader's), as arrays where pandas holds them so (by
    # position: no Series made for each)
    get = getattr(b, "_get_column_array", None)
    theirs = {c: get(i) if get is not None else b[c].array for i, c in enumerate(ident)}
    held = {c: arrays[c] for c in counters}
    del arrays, b, get                          # the counter blocks held by ``held`` alone
    # the identity columns joined a column at a time, each of the chunk's let go as it is copied (not all of
    # them beside their copy: a quarter of a chunk, 3 MB more at this step's peak)
    head = pd.DataFrame({c: _identity_joined(a[c], theirs.pop(c)) for c in ident}, copy=False)
    k = len(a)
    n = k + len(next(iter(held.values())))
    parts = [head]
    for i0 in range(0, len(counters), _BLOCK):
        cs = counters[i0:i0 + _BLOCK]
        block = np.empty((len(cs), n), np.uint64)
        for i, c in enumerate(cs):
            block[i, :k] = mine[c]
            block[i, k:] = held.pop(c)          # the last column of a block: the block goes
        parts.append(pd.DataFrame(block.T, columns=cs, copy=False))
    out = pd.concat(parts, axis=1)
    parts = None
    _trim()                 # the chunk's identity columns (under the mapping threshold): their heap pages back
    return out


def _identity_joined(a: pd.Series, y):
    """The carried samples' column ``a`` then the chunk's array ``y`` (:func:`_concat_column`)."""
    out = _joined(a.array, y)
    return out if out is not None else _concat_column(a, pd.Series(y, copy=False))


# counters a block of the copy after the carried samples (as the SMF reader's column-order blocks): the deltas of
# a chunk are made a block at a time and each block of its samples' counters let go once used
# (app.engine.counter_blocks.DeltaRows.make_all): one block of all of them stayed whole until the last was made
_BLOCK = 8


def _sort_key(c: str):
    from app.engine.deltas import _counter_sort_key

    return _counter_sort_key(c)
