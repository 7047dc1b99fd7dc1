"""The fleet dataset on disk: append-only, content-addressed, one writer at a time.

Layout of ``DATASET/``::

    nestscope-dataset.json                              format marker
    samples/cec=<CEC>/month=<YYYY-MM>/part-<sha12>-<uuid>.parquet    counter samples (the counters intervals need)
    intervals/cec=<CEC>/month=<YYYY-MM>/part-<sha12>-<uuid>.parquet  the engine's per-CPU interval deltas
    manifest/<sha256>.json                              one entry per source file (the commit record)

Every source file is one unit of work, done under the dataset lock (:mod:`app.dataset.lock`: two extracts take
turns, so overlapping data is added once) and read a chunk of records at a time (:mod:`app.formats.chunks`,
:mod:`app.dataset.adder`: memory bounded by a chunk).  Its part files are written under temporary names and renamed into
place (``os.replace``); then its manifest entry is written to a temporary file and *linked* to
``manifest/<sha256>.json``, which fails if the name exists.  Readers only read the part files that a
manifest entry lists, so

* extracting the same content again adds nothing (the entry exists: nothing is written);
* two processes extracting at once never see each other's half-written files, and of two processes
  extracting the same content exactly one commits (the other deletes its parts);
* an interrupted extract commits nothing: its parts are removed (or, after a hard kill, are orphans no
  reader lists; ``Dataset.orphans()`` names them, the next extract removes them once they are an hour old);
* a damaged manifest entry or part file is left out of every answer and named in a finding
  (:mod:`app.dataset.integrity`: entries carry a checksum of their content, parts their size and CRC-32), and
  ``extract`` adds a file whose manifest entry is damaged again.

Intervals are the deltas of :func:`app.engine.deltas.compute_intervals` (the code behind ``report``), computed
per file with the last earlier sample of each CPU already in the dataset as context, so a run of running
totals (SMF 113 subtype 2, z/VM) split over files extracted in time order loses no interval.  Time buckets
and everything that depends on the whole dataset are computed at query time.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote

import numpy as np
import pandas as pd

from app import memory
from app.dataset import integrity, tables
from app.findings import Finding

__all__ = ["Dataset", "DatasetError", "ExtractResult", "FORMAT", "INTERVAL_IDENT", "interval_counters"]

FORMAT = {"format": "nestscope-dataset", "version": tables.FORMAT_VERSION}
MARKER = "nestscope-dataset.json"
# identity columns of the intervals table (strings unless noted)
INTERVAL_IDENT = ["source", "sha256", "cec", "machine_type", "model", "lpar", "system", "os", "class", "cpu",
                  "core", "cpu_speed", "cfvn", "csvn", "t_start", "t_end", "interval_s", "generation",
                  "formula_set", "qbits", "utc_offset_s", "month"]
_INT_COLS = {"cpu": "int32", "core": "int32", "cfvn": "int32", "csvn": "int32", "qbits": "int64"}
_FLOAT_COLS = {"cpu_speed", "interval_s"}
_CONTEXT_SOURCE = "\x00dataset-context"


class DatasetError(Exception):
    """A directory that is not a usable dataset (message names the path)."""


@dataclass
class ExtractResult:
    """What ``extract`` did with one source file."""

    file: str
    sha256: str
    status: str                 # 'added' | 'present' | 'unreadable' | 'error'
    message: str = ""
    samples: int = 0
    intervals: int = 0
    findings: int = 0
    entry: dict[str, Any] = field(default_factory=dict)


def interval_counters(sets) -> set[str]:
    """Counters kept in the intervals table: every basic and problem-state counter and every counter a formula
    of ``sets`` reads (the rule of :class:`app.engine.Workspace`, so deltas and resets match ``report``)."""
    keep: set[str] = {f"B{i}" for i in range(32)} | {f"P{i}" for i in range(32, 64)}
    for fs in sets.values():
        keep |= fs.counters()
    return keep


def _now_iso() -> str:
    """Now, ISO 8601 UTC with microseconds (``2026-11-26T08:01:23.456789Z``)."""
    ns = time.time_ns()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(ns // 10**9)) + f".{ns // 1000 % 10**6:06d}Z"


def _iso(ts) -> str | None:
    if ts is None or pd.isna(ts):
        return None
    return pd.Timestamp(ts).strftime("%Y-%m-%dT%H:%M:%SZ")


def _months(ns: np.ndarray, categorical: bool = False) -> np.ndarray | pd.Categorical:
    """``YYYY-MM`` of each int64 nanosecond time (formatted once per distinct month; ``categorical``: as a
    categorical, no string a row)."""
    m = np.asarray(ns, dtype=np.int64).view("datetime64[ns]").astype("datetime64[M]")
    if np.isnat(m).any():
        return pd.to_datetime(ns, unit="ns").strftime("%Y-%m").to_numpy(dtype=object)
    uniq, inv = np.unique(m, return_inverse=True)
    if categorical:
        return pd.Categorical.from_codes(inv.reshape(-1), categories=pd.Index([str(u) for u in uniq], dtype="str"))
    return np.array([str(u) for u in uniq], dtype=object)[inv.reshape(-1)]


class Dataset:
    """A fleet dataset directory (see the module docstring).

    Parameters
    ----------
    root : path
        The dataset directory.
    create : bool
        Create it (and its marker) when missing.
    """

    def __init__(self, root: str | Path, create: bool = False):
        self.root = Path(root)
        marker = self.root / MARKER
        if not marker.exists():
            if not create:
                why = "does not exist" if not self.root.exists() else "is not a NestScope dataset (no " + MARKER + ")"
                raise DatasetError(f"{self.root}: {why}; make one with: nestscope extract FILE... --to {self.root}")
            if self.root.exists() and any(p.name != MARKER for p in self.root.iterdir()) \
                    and not (self.root / "manifest").is_dir():
                raise DatasetError(f"{self.root}: exists and is not empty; give a new or a NestScope dataset directory")
            (self.root / "manifest").mkdir(parents=True, exist_ok=True)
            self._atomic_write(marker, json.dumps(FORMAT).encode())
        self.version = _check_version(self.root, marker)
        for d in ("manifest", *tables.TABLES):
            (self.root / d).mkdir(exist_ok=True)
        self._bad_entries: dict[str, Finding] = {}     # manifest entries and part files that failed a check
        self._bad_parts: dict[str, Finding] = {}
        self._cleaned = False
        self.cleaned: list[Path] = []                  # leftovers the first extract of this object removed
        self._index = None
        self._index_seen = 0.0
        # the samples table keeps every counter as read only with ``extract --keep-samples``; otherwise the
        # counters the intervals are computed from (all that dedup and later deltas read back)
        self.keep_samples = False
        self._pending: dict[str, dict[str, Any]] = {}  # parts of the file being added, not committed yet
        self._pending_visible = True                   # listed by parts() (app/dataset/adder.py)
        self._lock = None

    def lock(self, say: Callable[[str], None] | None = None):
        """The dataset lock (:mod:`app.dataset.lock`): one writer from the first dedup look-up to the commit.
        Re-entrant; ``say`` (default: standard error) hears once who holds it while this process waits."""
        from app.dataset.lock import DatasetLock

        if self._lock is None:
            import sys

            self._lock = DatasetLock(self.root, "nestscope extract",
                                     say=say or (lambda m: print(m, file=sys.stderr, flush=True)))
        return self._lock

    # -- reading ---------------------------------------------------------------------
    @property
    def index(self):
        """The manifest index (:mod:`app.dataset.index`), loaded once per :class:`Dataset` and refreshed by
        directory listing at most once a second (entries other processes commit meanwhile)."""
        from app.dataset.index import ManifestIndex

        now = time.monotonic()
        if self._index is None:
            self._index = ManifestIndex(self.root)
            self._index_seen = now
        elif now - self._index_seen > 1.0:
            self._index.refresh()
            self._index_seen = now
        return self._index

    def save_index(self) -> bool:
        """Write the manifest index when it changed (``extract`` and ``compact`` do at their end); False when the
        dataset is not writable."""
        return self._index.save() if self._index is not None else True

    def _note_damaged(self) -> None:
        idx = self.index
        bad = {str(self.root / "manifest" / n): (why, name) for n, why, name in idx.damaged()}
        mine = str(self.root / "manifest") + os.sep     # compaction records' findings are compact.py's to drop
        for k in list(self._bad_entries):
            if k not in bad and k.startswith(mine):
                self._bad_entries.pop(k)
        for k, (why, name) in bad.items():
            if k not in self._bad_entries:
                self._bad_entries[k] = integrity.manifest_finding(Path(k), why, {"name": name} if name else None)

    def _scan(self) -> tuple[list[dict[str, Any]], set[str]]:
        """(committed entries that pass their checks, part paths listed by any entry that parses)."""
        idx = self.index
        idx.verify()
        self._note_damaged()
        idx.load_bodies()                       # every entry: their JSON text from the index at once
        out = [e for e in (idx.entry(n) for n in idx.sound()) if e is not None]
        out.sort(key=lambda e: (str(e.get("extracted_at", "")), str(e.get("sha256", ""))))
        return out, idx.listed()

    def entries(self) -> list[dict[str, Any]]:
        """Committed manifest entries, oldest extract first (an entry that fails its checks is left out and
        named in :attr:`findings`)."""
        return self._scan()[0]

    def n_readable(self) -> int:
        """Number of committed entries with counter data (from the index: no entry is parsed)."""
        return self.index.n_readable()

    @property
    def findings(self) -> list[Finding]:
        """The damaged manifest entries and part files met so far (what answers have left out)."""
        return list(self._bad_entries.values()) + list(self._bad_parts.values())

    def leftovers(self, min_age_s: float = integrity.LEFTOVER_AGE_S, cecs: Iterable[str] | None = None,
                  month_ok: Callable[[str], bool] | None = None) -> list[Path]:
        """Temporary and unlisted part files of interrupted extracts, last written ``min_age_s`` ago or more; with
        ``cecs`` or ``month_ok`` only in those partitions' directories (a query's, :func:`app.dataset.plan.scope`)."""
        return integrity.leftovers(self.root, self._listed(), min_age_s, set(cecs) if cecs is not None else None,
                                   month_ok)

    def _listed(self) -> set[str]:
        from app.dataset import compact

        return self.index.listed() | compact.listed(self)

    def clean_leftovers(self, min_age_s: float = integrity.LEFTOVER_AGE_S) -> list[Path]:
        """Remove :meth:`leftovers` (the next extract does, once per :class:`Dataset`); returns what went."""
        return integrity.remove_files(self.leftovers(min_age_s))

    def _committed(self, sha: str) -> bool:
        """True when the dataset holds a sound manifest entry of ``sha``; a damaged one is removed (its file can
        then be added again) and its leftovers of killed extracts with it."""
        if not self._cleaned:
            self._cleaned = True
            self.cleaned = self.clean_leftovers()
        p = self.root / "manifest" / f"{sha}.json"
        try:
            e = json.loads(p.read_text(encoding="utf-8"))
            why = integrity.entry_problem(p.name, e)
        except FileNotFoundError:
            return False
        except (OSError, ValueError) as exc:
            why = str(exc)
        if not why:
            return True
        try:
            p.unlink()
        except FileNotFoundError:
            pass
        self._bad_entries.pop(str(p), None)
        if self._index is not None:
            self._index.forget(p.name)
        return False

    def parts(self, table: str, cecs: Iterable[str] | None = None, months: Iterable[str] | None = None) -> list[str]:
        """Absolute paths of the committed part files of ``table`` ('samples' or 'intervals'), optionally only
        of some CECs and months (partition pruning before any file is opened: the index says which parts a
        partition holds).  Parts that compaction merged are replaced by the merged part."""
        from app.dataset import compact
        from app.dataset.index import part_info

        cecs = set(cecs) if cecs is not None else None
        months = set(months) if months is not None else None
        idx = self.index
        rows = idx.part_rows(table, cecs, months)
        if idx.verify({r[0] for r in rows}):      # an entry file rewritten since it was indexed: checked again
            rows = idx.part_rows(table, cecs, months)
        self._note_damaged()
        merged = compact.active(self, table, cecs, months)
        out = []
        replaced: set[str] = set()
        for rec in merged:
            if (cecs is None or rec["cec"] in cecs) and (months is None or rec["month"] in months):
                path = self.root / rec["part"]
                why = integrity.part_problem(path, rec)
                if why:
                    self._bad_parts[str(path)] = compact.part_finding(path, why, rec)
                else:
                    self._bad_parts.pop(str(path), None)
                    out.append(str(path))
            replaced |= set(rec["replaces"])
        for row in rows:
            if row[2] in replaced:
                continue
            path = self.root / row[2]
            info = part_info(row)
            why = integrity.part_problem(path, info)
            if why:                  # left out, and said
                e = idx.entry(row[0]) or {"sha256": row[0][:-5]}
                self._bad_parts[str(path)] = integrity.part_finding(path, why, e, info)
                continue
            self._bad_parts.pop(str(path), None)
            out.append(str(path))
        for rel, k in self._pending.items() if self._pending_visible else ():   # the file being added's parts
            if rel.split("/", 1)[0] == table and (cecs is None or k["cec"] in cecs) \
                    and (months is None or k["month"] in months):
                out.append(str(self.root / rel))
        return out

    def has_parts(self, table: str = "intervals") -> bool:
        """True when any sound entry lists a part of ``table`` (nothing is opened)."""
        return bool(self.index.keys(table))

    def months(self, cecs: Iterable[str] | None = None) -> list[str]:
        """Months (YYYY-MM) holding committed interval parts (of some CECs)."""
        cs = set(cecs) if cecs is not None else None
        return sorted({m for c, m in self.index.keys("intervals") if cs is None or c in cs})

    def cecs(self) -> list[str]:
        """CECs holding committed interval parts."""
        return sorted({c for c, _m in self.index.keys("intervals")})

    def orphans(self) -> list[Path]:
        """Part and temporary files no manifest entry lists (left by a killed extract), each once; safe to delete
        when no extract runs (:meth:`clean_leftovers` removes those an hour old)."""
        listed = self._listed()
        found = {p for t in tables.TABLES if (self.root / t).is_dir()
                 for p in (self.root / t).rglob("*.parquet") if str(p) not in listed}
        return sorted(found | set(self.root.rglob(".tmp-*")))

    def counters(self) -> list[str]:
        """Counter columns present in the intervals table."""
        cols = self.index.counters()
        from app.engine.deltas import _counter_sort_key
        return sorted(cols, key=_counter_sort_key)

    # -- writing ---------------------------------------------------------------------
    @staticmethod
    def _atomic_write(path: Path, data: bytes) -> None:
        tmp = path.with_name(f".tmp-{uuid.uuid4().hex}-{path.name}")
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)

    def _write_part(self, table: str, cec: str, month: str, sha: str, frame: pd.DataFrame,
                    counters: Sequence[str] = (), take: np.ndarray | None = None, deltas=None) -> str:
        """Write one part file (temporary name, then rename) with the table's one schema
        (:mod:`app.dataset.tables`) of the rows ``take`` of ``frame`` (None: all), its counters from ``deltas``
        (``tables.write_frame``) where given (``deltas.valued`` then tells which of them have a value in a row
        written so far); returns its path relative to the root."""
        rel = Path(table) / f"cec={quote(cec, safe='')}" / f"month={month}" / f"part-{sha[:12]}-{uuid.uuid4().hex[:12]}.parquet"
        path = self.root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(".tmp-" + path.name)
        got = tables.write_frame(table, frame, counters, tmp, take=take, deltas=deltas)   # a row group at a time
        if deltas is not None:
            deltas.valued = got if getattr(deltas, "valued", None) is None else deltas.valued | got
        os.replace(tmp, path)
        return rel.as_posix()

    def _commit(self, sha: str, entry: dict[str, Any]) -> bool:
        """Publish the manifest entry; False when another extract committed the same content first."""
        final = self.root / "manifest" / f"{sha}.json"
        tmp = final.with_name(f".tmp-{uuid.uuid4().hex}.json")
        with open(tmp, "w", encoding="utf-8") as fh:
            json.dump(entry, fh, indent=1, default=str)
            fh.flush()
            os.fsync(fh.fileno())
        try:
            os.link(tmp, final)          # atomic and exclusive: fails when the entry exists
            return True
        except FileExistsError:
            return False
        except OSError:                  # file systems without hard links: exclusive create + replace
            try:
                fd = os.open(final, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
            except FileExistsError:
                return False
            os.close(fd)
            os.replace(tmp, final)
            return True
        finally:
            if tmp.exists():
                tmp.unlink()

    def _intervals(self, samples: pd.DataFrame | list, path: str, sets, tail: pd.DataFrame | None = None,
                   held: pd.DataFrame | None = None, sha: str | None = None,
                   also_in_file: pd.DataFrame | None = None, firsts: dict | None = None):
        """The intervals to add for the file's new ``samples`` (:mod:`app.dataset.dedup`), the engine's findings
        of the file, and the stored intervals they supersede.  ``tail``: the last sample of each CPU of the
        file's earlier chunks, all before ``samples`` (context samples, :mod:`app.dataset.adder`); the
        dataset's own context samples of those CPUs up to the tail's time are then left out; ``held``: stored
        intervals the look-up does not see (:func:`app.dataset.dedup.settle`); ``sha``: the file's hash, and
        ``also_in_file``: the keys (``dedup.new_rows``) of the stored samples the file holds too: an interval
        between two samples the file holds is measured within the file (the usual length, against which an
        interval is marked odd-length, is taken over those first), whichever copy of a sample is used.
        ``samples`` in a list (a box) is taken out of it: its counters are let go once the engine has made the
        deltas (bounded memory: the samples and the intervals' counters are held together only while the deltas
        are made).  Returned too: the rows of the intervals frame to add (None: every row), taken when they
        are written, not copied out of it; ``firsts``: the first time of each CPU of ``samples``
        (:func:`app.dataset.dedup.first_times_of`) when found already; and the
        :class:`~app.dataset.adder.CheckedDeltas` of its counters
        (the frame has none: they are made a row group at a time as the part is written, so the chunk's deltas
        never exist whole, and tested for plausibility then: the findings returned are the engine's, the
        check's come from its ``findings()`` after the write)."""
        from app.dataset import dedup
        from app.engine.deltas import FILE_COLUMN, compute_intervals

        if isinstance(samples, list):
            samples = samples.pop()
        # the pages the part's write and its check freed after the write's own release (about 2 MB in the C heap
        # and Arrow's pool) handed back before the engine's working arrays are made beside the samples (issue 24)
        memory.release(collect=False)
        ctx = dedup.with_tail(dedup.context_samples(self, samples), tail, samples)
        if sha is not None:         # each sample's file: the stored ones' own, this file's for those it holds too
            # one name in every row: a categorical (the engine factorizes it by its one category, not a string
            # a row: 7 ms a chunk)
            samples = samples.assign(**{FILE_COLUMN: pd.Categorical.from_codes(
                np.zeros(len(samples), np.int8), categories=pd.Index([sha], dtype="str"))})
            if ctx is not None and len(ctx):
                # a copy: the column's own array may come back (then marking the file's samples below named the
                # stored samples' file with this file's hash, and the intervals they end with it)
                fid = ctx["sha256"].astype(str).to_numpy(dtype=object, copy=True)
                if also_in_file is not None and len(also_in_file):
                    fid[dedup._isin(dedup._key_frame(ctx, dedup.SAMPLE_KEY, "time"), also_in_file,
                                    dedup.SAMPLE_KEY + ["t"])] = sha
                # joined, not inserted: the context frame is made column by column (an insert warns of that)
                ctx = pd.concat([ctx, pd.DataFrame({FILE_COLUMN: fid}, index=ctx.index)], axis=1)
        frames = [f for f in (ctx, samples) if f is not None and len(f)]
        orig = ctx[["source", "offset", "_orig_source", "sha256"]].astype({"source": str}) if ctx is not None else None
        gone = ["_orig_source", "sha256", "month"]     # (a frame with none of them: as it is, no new frame made)
        frames = [f.drop(columns=[c for c in gone if c in f.columns]) if any(c in f.columns for c in gone) else f
                  for f in frames]
        # what is read after the deltas (the records' UTC offsets, the settling): the samples' identities and
        # times, not their counters: the engine is handed the frames, and their counter blocks are freed as
        # soon as the deltas are made (the samples and the intervals' counters are not held on after that)
        # (only the columns those read: the records' systems, times, local times, sources and offsets, and the
        # intervals' key; the samples' other identity columns go with the frames the engine consumes: issue 24)
        light = [f[[c for c in f.columns if c in _LIGHT]] for f in frames]
        del samples, ctx
        # no counter columns: their deltas are made a row group at a time as they are written (``later``)
        iv, findings, later = compute_intervals(frames, sets, interval_counters(sets), consume=True, lazy=True,
                                                run_start_bit=True)
        from app.engine.timezone import add_utc_offsets

        # each interval's UTC offset, the engine's rule over the file's records and the stored ones around them
        # (their offsets read back as local times); its findings are report's and info's, not extract's
        add_utc_offsets(iv, light)
        from app.dataset.adder import CheckedDeltas     # implausible rows marked (qbits 128); queries leave them out

        # tested as its deltas are made for the write (a row group at a time), its findings after the write
        later = CheckedDeltas(iv, later, sets)
        frames = [f[dedup.INTERVAL_KEY + ["time"]] for f in light]
        del light
        # the rows to add are not copied out of ``iv``: the caller writes them from it (tables.write_frame's take)
        add, drop = dedup.settle_rows(self, iv, frames, held, firsts)   # (``samples``: the last frame)
        keep = None if add.all() else np.flatnonzero(add)
        del frames
        memory.release(collect=False)   # the engine's temporaries (small arrays: holes in the C heap) handed back
        iv["_sha"] = None
        other = dedup._is_context(iv["source"])     # one test a name, not one a row
        # intervals of other files computed again (of the rows added: the others are neither written nor read
        # again -- the check's findings name the engine's rows, CheckedDeltas holds them as made): they keep that
        # file's name and hash
        if other.any() and (keep is None or other[keep].any()):
            m = iv.loc[other, ["source", "offset"]].astype({"source": str}).merge(
                orig.drop_duplicates(["source", "offset"]), on=["source", "offset"], how="left")
            # the names as a categorical (a part of the chunk's rows takes them from each name once), not a
            # string a row: only the rows of other files change
            names = tables.with_names(iv["source"], other, m["_orig_source"].to_numpy(dtype=object))
            if names is None:
                iv["source"] = iv["source"].astype(str)
                iv.loc[other, "source"] = m["_orig_source"].to_numpy()
            else:
                iv["source"] = names
            iv.loc[other, "_sha"] = m["sha256"].to_numpy()
        return iv, [f for f in findings if f.file == path], drop, keep, later

    @staticmethod
    def _interval_frame(iv: pd.DataFrame, sha: str, keep: np.ndarray | None = None) -> tuple[pd.DataFrame, list[str]]:
        """The intervals table's columns of ``iv`` (every row: ``keep``, the rows to be written, only decides
        which counters have a value) and the counters that do (none when ``iv`` has no counter columns: a lazy
        frame's deltas are written from its :class:`~app.engine.counter_blocks.DeltaRows`)."""
        start = list(iv.columns).index("qbits") + 1
        counters = [c for c in iv.columns[start:] if c not in ("_sha", tables.OFFSET)]
        out: dict[str, Any] = {}
        for c in INTERVAL_IDENT:
            if c == "sha256":       # rows completing a later file keep that file's hash
                other = iv["_sha"].notna().to_numpy() if "_sha" in iv.columns else np.zeros(len(iv), bool)
                mine = pd.Categorical.from_codes(np.zeros(len(iv), np.int8), categories=pd.Index([sha], dtype="str"))
                if other.any():     # each hash once (a categorical), not 64 characters a row
                    both = tables.with_names(pd.Series(mine), other, iv["_sha"].to_numpy(dtype=object)[other])
                    mine = both if both is not None else np.where(other, iv["_sha"], sha).astype(object)
                out[c] = mine
            elif c == "t_start":
                out[c] = iv["interval_start"].to_numpy(dtype="datetime64[ns]")
            elif c == "t_end":
                out[c] = iv["interval_end"].to_numpy(dtype="datetime64[ns]")
            elif c == "month":
                out[c] = _months(iv["interval_end"].to_numpy(dtype="datetime64[ns]").view(np.int64), True)
            elif c == tables.OFFSET:        # NaN (unknown) is stored as NULL
                out[c] = iv[c].to_numpy(dtype=np.float64) if c in iv.columns else np.full(len(iv), np.nan)
            elif c in _INT_COLS:
                out[c] = iv[c].to_numpy(dtype=_INT_COLS[c])
            elif c in _FLOAT_COLS:
                out[c] = iv[c].to_numpy(dtype=np.float64)
            elif isinstance(iv[c].dtype, pd.CategoricalDtype) and iv[c].cat.categories.dtype.kind in "OT":
                out[c] = iv[c].array        # names: each category once, as the file's strings (NaN: NULL)
            else:
                out[c] = iv[c].astype(str).to_numpy(dtype=object)
        for c in counters:
            v = iv[c].to_numpy(dtype=np.float64)             # NaN (set absent) is stored as NULL
            w = v if keep is None else v[keep]
            if len(w) and not np.isnan(w[0]) or not np.isnan(w).all():
                out[c] = v      # a counter of a set no record has is left out: the part's schema writes it NULL
        # the columns as they are (views of the engine's block where the type is already the stored one), not
        # consolidated into a second block: the part is written a row group at a time (tables.write_frame), so
        # the interval rows exist once, not twice, while they are written
        return pd.DataFrame(out, copy=False), counters

    def extract(self, path: str | Path, sets=None, progress: Callable[[str], None] | None = None) -> ExtractResult:
        """Add one source file (see the module docstring).  Never raises for bad data; an exception of the
        machine (disk full...) propagates after this file's part files are removed."""
        from app.dataset.content_hash import ContentHash, sha256_of
        from app.formats import open_data

        file, data, failed = open_data(path)           # the guards of every command (FIFO, devices, size, names)
        if failed is not None:
            return ExtractResult(file, "", "error", "; ".join(f.message for f in failed.findings))

        from app.formats.chunks import chunk_bytes

        self.check_writable()
        if len(data) <= chunk_bytes():     # read in one piece: hashed first (a file held already is not read)
            return self._extract_chunks(data, file, sha256_of(data), sets)
        # more than a chunk of input: the content's hash made in a thread beside the first chunk's decoding,
        # waited for (and looked up in the manifest) where the adder first needs it, before its first part file
        # (a file held already costs its first chunk's reading besides the hash)
        sha = ContentHash(data)
        try:
            return self._extract_chunks(data, file, sha, sets)
        finally:
            sha.wait()          # (the data outlives the thread reading it)

    def _extract_chunks(self, data, file: str, sha, sets) -> ExtractResult:
        from app.engine.catalog import load_formula_sets
        from app.formats.chunks import read_chunks

        with self.lock():
            if isinstance(sha, str) and self._committed(sha):
                return ExtractResult(file, sha, "present", f"{file}: already in the dataset (same SHA-256)")
            sets = sets or load_formula_sets()
            # the SMF reader decodes only the counters kept (memory: the skipped columns are never made), a
            # chunk of records at a time (app/formats/chunks.py), each counter one contiguous array (by_column:
            # handed to Arrow as it is, a chunk's copy after the carried samples letting go of a block at a time;
            # the window's and the CLI's reads keep the row order the engine's row gathers are fastest on)
            need = None if self.keep_samples else interval_counters(sets)
            memory.streaming_heap()
            _no_huge_pages()
            return self.add_chunks(read_chunks(data, file, counters=need, by_column=True), file, sha, len(data),
                                   sets, own=True)

    def add_result(self, r, sha: str, size: int, sets) -> ExtractResult:
        """Add an already decoded file (:class:`app.formats.schema.ReadResult`) whose content hash is ``sha``
        (``extract`` does the reading; benchmarks hand over generated counter samples)."""
        return self.add_chunks([r], r.file, sha, size, sets)

    def add_chunks(self, chunks: Iterable, file: str, sha, size: int, sets, own: bool = False) -> ExtractResult:
        """Add a file decoded a chunk at a time (``chunks``: its :class:`~app.formats.schema.ReadResult` pieces
        in file order, :func:`app.formats.chunks.read_chunks`) under the dataset lock, committed once at the end
        (:class:`app.dataset.adder.FileAdder`): memory is bounded by a chunk, not the file.  ``sha``: the content
        hash, or a :class:`~app.dataset.content_hash.ContentHash` still being made.  ``own``: the chunks
        are this call's alone (a reader's), so each one's samples frame is let go as soon as it is copied."""
        from app.dataset.adder import FileAdder
        from app.dataset.content_hash import AlreadyPresent

        with self.lock():
            if isinstance(sha, str) and self._committed(sha):     # (a ContentHash: looked up when first needed)
                return ExtractResult(file, sha, "present", f"{file}: already in the dataset (same SHA-256)")
            adder = FileAdder(self, file, sha, size, sets)
            try:
                for r in chunks:        # meta "more": not the last chunk (app/formats/chunks.py)
                    more = (r.meta or {}).get("more", False)
                    adder.add(r, last=not more, own=own)
                    del r
                    if more:            # the chunk's blocks go back to the system before the next is decoded
                        memory.release(collect=False)
                return adder.finish()
            except AlreadyPresent as got:       # found where the hash was first needed: nothing written
                adder.abort()
                return ExtractResult(file, got.sha, "present", f"{file}: already in the dataset (same SHA-256)")
            except BaseException:
                adder.abort()
                raise

    def check_writable(self) -> None:
        """Raise :class:`DatasetError` unless parts of this NestScope's format may be added: a version-2 dataset
        (no ``utc_offset_s``) is read, but parts with the new column beside its own would give one table two
        schemas."""
        if self.version != FORMAT["version"]:
            raise DatasetError(f"{self.root}: dataset format version {self.version} (its intervals keep no UTC "
                               f"offsets); this NestScope adds only to version {FORMAT['version']} datasets. Its "
                               "queries still run (all but --tz local); to add files or query in local time, "
                               "re-extract the source files (their paths are in "
                               f"{self.root}/manifest/*.json, 'path') into a new dataset: "
                               "nestscope extract FILE... --to NEWDIR")

    def _part_check(self, rel: str, rows: int) -> dict[str, int]:
        """What a part file's manifest entry records to check it by: rows, bytes, CRC-32."""
        path = self.root / rel
        return {"rows": int(rows), "bytes": int(path.stat().st_size), "crc32": integrity.file_crc32(path)}

    def _remove(self, rels: Sequence[str]) -> None:
        for rel in rels:
            try:
                (self.root / rel).unlink()
            except OSError:
                pass

    # -- summaries -------------------------------------------------------------------
    def systems(self) -> pd.DataFrame:
        """cec, machine_type, lpar, system, os, classes (dict), first, last, files: one row per LPAR."""
        rows = []
        for e in self.entries():
            for s in e.get("systems", []):
                rows.append({**s, "first": e.get("time_first"), "last": e.get("time_last"), "file": e.get("name")})
        if not rows:
            return pd.DataFrame(columns=["cec", "machine_type", "lpar", "system", "os", "classes", "first", "last",
                                         "files"])
        df = pd.DataFrame(rows)
        g = df.groupby(["cec", "machine_type", "lpar", "system", "os"], sort=True)
        out = g.agg(first=("first", "min"), last=("last", "max"), files=("file", "nunique")).reset_index()
        cls = g["classes"].agg(lambda xs: {k: max(d.get(k, 0) for d in xs) for d in xs for k in d})
        out["classes"] = cls.to_numpy()
        return out


def _check_version(root: Path, marker: Path) -> int:
    """The dataset's format version; one that cannot be read raises (saying which and how to re-extract).
    Version 2 (no UTC offsets) is read, not written: :meth:`Dataset.check_writable`."""
    try:
        fmt = json.loads(marker.read_text(encoding="utf-8"))
        ver = int(fmt.get("version", 1))
    except (OSError, ValueError, TypeError, AttributeError):
        raise DatasetError(f"{root}: its {MARKER} is unreadable; re-extract the source files into a new dataset: "
                           f"nestscope extract FILE... --to NEWDIR") from None
    if ver in tables.READABLE_VERSIONS:
        return ver
    what = ("written by an older NestScope (bare int64 nanosecond times, names stored as dictionaries in some "
            "files: not readable by every engine)" if ver < FORMAT["version"] else "written by a newer NestScope")
    raise DatasetError(f"{root}: dataset format version {ver}, {what}; this NestScope reads versions "
                       f"{' and '.join(str(v) for v in tables.READABLE_VERSIONS)}. Re-extract the source files (their paths are in {root}/manifest/*.json, "
                       f"'path') into a new dataset: nestscope extract FILE... --to NEWDIR")


def _counter_sort_key(c: str):
    from app.engine.deltas import _counter_sort_key as key

    return key(c)


def cec_of_dir(name: str) -> str:
    """``cec=3931-123F5`` -> ``3931-123F5``."""
    return unquote(name.split("=", 1)[1]) if "=" in name else name


# the samples' columns read after the engine's step (app.engine.timezone.record_offsets: LPAR_KEY, time,
# local_time, source, offset; app.dataset.dedup.settle_rows: INTERVAL_KEY and time)
_LIGHT = frozenset(["cec", "lpar", "system", "class", "cpu", "time", "local_time", "source", "offset"])

PR_SET_THP_DISABLE = 41         # prctl option (linux/prctl.h)


def _no_huge_pages() -> bool:
    """No transparent huge pages for the rest of the process (the extract's, Linux; process-wide and lasting, as
    :func:`app.memory.streaming_heap`): the Parquet writer's column encoders take their buffers from Arrow's
    default pool whatever pool the writer is given, and that pool (mimalloc) commits its arenas whole, which the
    kernel backs with 2 MiB pages: half a megabyte of encoder buffers kept 4-6 MB resident beside a chunk's samples
    part (issue 24: 2 MB more at the extract's peak).  True when the switch was set."""
    import ctypes
    import sys

    if not sys.platform.startswith("linux"):
        return False
    try:
        return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False
