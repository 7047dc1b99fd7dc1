"""Loading controller: queue files, run one ReadWorker per file, notice duplicates.

The controller owns the jobs and their status-bar widgets (progress bar +
Cancel).  It never touches the workspace: it emits ``file_read`` with the
outcome and the window adds it on the GUI thread.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QProgressBar, QToolButton, QWidget

from app.ui import messages as M
from app.ui.workers import LoadOutcome, ReadWorker, failed_result, file_digest, read_pool


@dataclass
class Job:
    """One file being read."""

    path: str
    resolved: str
    worker: ReadWorker
    widget: QWidget | None = None
    done: bool = False
    size: int = -1


@dataclass
class OpenedFile:
    """A file already added to the workspace."""

    path: str
    resolved: str
    size: int
    mtime_ns: int
    digest: str = ""


LABEL_CHARS = 24   # a progress label's longest text


def short_names(names: list[str]) -> list[str]:
    """The part of each file name that tells it from the others loaded with it: the common start and end (cut
    at a ``_``, ``-`` or ``.``) are left out ("after_z16_ZOSA_smf113.rdw.gz" and "after_z16_ZOSB_smf113.vbs.gz"
    give "ZOSA_smf113.rdw" and "ZOSB_smf113.vbs"), and what is still long is cut at its end with "..." (the
    distinguishing part starts it)."""
    def cut_start(common: str) -> int:
        k = max((common.rfind(c) for c in "_-."), default=-1)
        return k + 1

    out = list(names)
    if len(names) > 1:
        pre = os.path.commonprefix(names)
        suf = os.path.commonprefix([n[::-1] for n in names])[::-1]
        a = cut_start(pre)
        b = min(len(n) for n in names) - a
        tail = len(suf) - (min((suf.find(c) for c in "_-." if c in suf), default=len(suf)))
        tail = min(tail, b)
        out = [n[a:len(n) - tail] if len(n) - tail > a else n for n in names]
    return [n if len(n) <= LABEL_CHARS else n[:LABEL_CHARS - 3] + "..." for n in out]


class JobWidget(QWidget):
    """Progress bar and Cancel button of one job: 0 % until the read reports its progress.

    Never an indeterminate ("busy") bar: the style animates one with a timer on the GUI thread, and every frame
    of every such bar is a call into Python for PySide's overrides check, holding the GIL.  The demo's seven
    reads had seven bars animating while the first file was read and its first table computed: 7-11 % of a core
    on the GUI thread, taken from the reader and the view job (a static bar: 1.7 %, as with none; issue 23)."""

    def __init__(self, name: str, on_cancel, parent: QWidget | None = None, label: str | None = None) -> None:
        super().__init__(parent)
        lay = QHBoxLayout(self)
        lay.setContentsMargins(2, 0, 2, 0)
        self.label = QLabel(label or name)
        self.label.setToolTip(name)
        self.label.setMinimumWidth(self.label.fontMetrics().horizontalAdvance(self.label.text()) + 4)
        self.bar = QProgressBar()
        self.bar.setRange(0, 100)
        self.bar.setValue(0)
        self.bar.setMaximumWidth(140)
        self.bar.setMaximumHeight(16)
        self.button = QToolButton()
        self.button.setText(M.CANCEL)
        self.button.setToolTip(M.CANCEL_TIP.format(name=name))
        self.button.clicked.connect(on_cancel)
        lay.addWidget(self.label)
        lay.addWidget(self.bar)
        lay.addWidget(self.button)

    def set_progress(self, fraction: float) -> None:
        self.bar.setValue(int(fraction * 100))


def expand_paths(paths: list[str]) -> list[str]:
    """Files given plus the files inside folders given (recursively, sorted, hidden skipped)."""
    out: list[str] = []
    for p in paths:
        path = Path(p)
        if path.is_dir():
            for f in sorted(path.rglob("*")):
                if f.is_file() and not any(part.startswith(".") for part in f.relative_to(path).parts):
                    out.append(str(f))
        else:
            out.append(str(path))
    return out


def _stat(path: str) -> tuple[int, int]:
    try:
        st = os.stat(path)
    except OSError:
        return (-1, -1)
    return (st.st_size, st.st_mtime_ns)


class LoadController(QObject):
    """Runs read jobs and reports their outcome by signal."""

    file_read = Signal(object)        # LoadOutcome, not a duplicate
    file_part = Signal(object)        # progressive.FirstPart of a big file still being read
    file_progress = Signal(str, float)   # path, fraction of its read done
    job_started = Signal(str)         # path
    job_ended = Signal(str)           # path, whatever the outcome
    message = Signal(str)             # status-bar text
    failed = Signal(str, str, str)    # path, short text, details (unexpected exception)
    idle = Signal()                   # no job left

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.jobs: dict[str, Job] = {}
        self.opened: list[OpenedFile] = []
        self.status_bar = None  # set by the window: QStatusBar receiving the job widgets
        self.counters = None    # set by the window: the counter columns its workspace reads (None: all)
        self.progressive = None  # set by the window: True when a big file's first part is wanted now
        self._live: set[ReadWorker] = set()  # workers still running (kept alive until they end)
        self._holding = False        # reads after the one in the pool wait (hold_next) ...
        self.held: list[Job] = []    # ... here, until release()

    # -- queries -------------------------------------------------------------------------------
    def busy(self) -> bool:
        return bool(self.jobs)

    def running_workers(self) -> int:
        """Workers whose thread has not returned yet (cancelled ones included)."""
        return len(self._live)

    def already_open(self, path: str) -> OpenedFile | None:
        """The opened file that ``path`` is (same resolved path, or same size+mtime+name)."""
        resolved = str(Path(path).resolve())
        size, mtime = _stat(path)
        for f in self.opened:
            if f.resolved == resolved:
                return f
            if (size, mtime) == (f.size, f.mtime_ns) and Path(path).name == Path(f.path).name and size >= 0:
                return f
        return None

    # -- actions -------------------------------------------------------------------------------
    def open(self, paths: list[str]) -> int:
        """Queue ``paths`` (files or folders); returns the number of jobs started."""
        started = 0
        todo = expand_paths(paths)
        labels = dict(zip(todo, short_names([Path(p).name for p in todo])))
        for path in todo:
            resolved = str(Path(path).resolve())
            name = Path(path).name
            dup = self.already_open(path)
            if dup is not None:
                self.message.emit(M.STATUS_DUPLICATE.format(name=name, other=dup.path))
                continue
            if resolved in self.jobs:
                self.message.emit(M.STATUS_QUEUED_DUP.format(name=name))
                continue
            self._start(path, resolved, labels.get(path))
            started += 1
        return started

    def hold_next(self) -> None:
        """Files opened from now on are read one at a time as usual, but those after the first wait for
        :meth:`release`: the window's first table is computed without a read beside it on the GIL (issue 23).
        A wait ends by itself when the read in the pool ends with nothing for the window (cancelled)."""
        self._holding = True

    def release(self) -> None:
        """The held reads start (in their order); later ones start at once."""
        self._holding = False
        held, self.held = self.held, []
        for job in held:
            if not job.done:
                self._pool(job)

    def cancel_all(self) -> None:
        for key in list(self.jobs):
            self.cancel(key)

    def cancel(self, resolved: str) -> None:
        """Stop a job now: its widget goes away and a late result is dropped."""
        job = self.jobs.get(resolved)
        if job is None:
            return
        job.worker.cancel()
        self.message.emit(M.STATUS_CANCELLED.format(name=Path(job.path).name))
        self._end(job)

    # -- internals -----------------------------------------------------------------------------
    def _start(self, path: str, resolved: str, label: str | None = None) -> None:
        # two files can only have the same content when they have the same size: the content digest is taken
        # (beside the decode) only then, not for every file (hashing a month's 564 MB slowed its first table)
        size = _stat(path)[0]
        same = size >= 0 and any(f.size == size for f in [*self.opened, *self.jobs.values()])
        worker = ReadWorker(path, self.counters, digest=same,
                            progressive=bool(self.progressive is not None and self.progressive()))
        job = Job(path, resolved, worker, size=size)
        self.jobs[resolved] = job
        name = Path(path).name
        if self.status_bar is not None:
            job.widget = JobWidget(name, lambda: self.cancel(resolved), label=label)
            self.status_bar.addPermanentWidget(job.widget)
            worker.signals.progress.connect(job.widget.set_progress)
        for sig in (worker.signals.finished, worker.signals.errored, worker.signals.cancelled):
            sig.connect(lambda *_a, w=worker: self._live.discard(w))
        worker.signals.finished.connect(lambda outcome: self._on_finished(job, outcome))
        worker.signals.errored.connect(lambda text, details: self._on_errored(job, text, details))
        worker.signals.cancelled.connect(lambda: self._end(job))
        worker.signals.part.connect(lambda part: None if job.done else self.file_part.emit(part))
        worker.signals.progress.connect(lambda f: None if job.done else self.file_progress.emit(path, f))
        self.message.emit(M.STATUS_LOADING.format(name=name))
        self.job_started.emit(path)
        if self._holding and any(j is not job and j not in self.held for j in self.jobs.values()):
            self.held.append(job)     # (a read of the window's is running: not a cancelled worker still ending)
        else:
            self._pool(job)

    def _pool(self, job: Job) -> None:
        self._live.add(job.worker)
        read_pool().start(job.worker)

    def _end(self, job: Job, emitted: bool = False) -> None:
        """``emitted``: the job's outcome went to the window (``file_read``)."""
        if job.done:
            return
        job.done = True
        self.jobs.pop(job.resolved, None)
        if job.widget is not None:
            if self.status_bar is not None:
                # the status bar keeps the height it has with a job's bar: without a bar it was 4 px lower, and
                # the window's layout then moved at the end of every read, repainting the tree and the table on
                # screen (a big file's first part: 0.1 CPU s of the GUI thread beside the whole file's add)
                bar = self.status_bar
                if bar.isVisible() and bar.height() > bar.minimumHeight():
                    bar.setMinimumHeight(bar.height())
                self.status_bar.removeWidget(job.widget)
            job.widget.deleteLater()
            job.widget = None
        self.job_ended.emit(job.path)
        if self._holding and not emitted and all(j in self.held for j in self.jobs.values()):
            self.release()   # cancelled, or a duplicate: no outcome the window would let the held reads go on
        if not self.jobs:
            self.idle.emit()

    def _on_finished(self, job: Job, outcome: LoadOutcome) -> None:
        if job.done:  # cancelled meanwhile: drop the late result
            return
        name = Path(job.path).name
        size, mtime = _stat(job.path)
        dup = self._same_content(job, size, outcome)
        if dup is not None:
            self.message.emit(M.STATUS_DUPLICATE.format(name=name, other=dup.path))
        else:
            self.opened.append(OpenedFile(job.path, job.resolved, size, mtime, outcome.digest))
            self.file_read.emit(outcome)
        self._end(job, emitted=dup is None)

    def _same_content(self, job: Job, size: int, outcome: LoadOutcome) -> OpenedFile | None:
        """The opened file with the content of ``outcome``'s file (None: none).  Only files of the same size are
        compared; a digest a read did not take (no file of its size was open or loading when it started) is
        taken here, once per file: the rare case of two files of one size opened together."""
        peers = [f for f in self.opened if f.size == size and size >= 0]
        if not peers:
            return None
        if not outcome.digest:
            outcome.digest = file_digest(job.path)
        for f in peers:
            if not f.digest:
                f.digest = file_digest(f.path)
            if outcome.digest and f.digest == outcome.digest:
                return f
        return None

    def _on_errored(self, job: Job, text: str, details: str) -> None:
        if job.done:
            return
        self.message.emit(M.STATUS_FAILED.format(name=Path(job.path).name, why=text))
        self.failed.emit(job.path, text, details)
        # the failure is also a finding naming the file, so Data health shows it (issue 14)
        self.file_read.emit(LoadOutcome(job.path, "", failed_result(job.path, text, details)))
        self._end(job, emitted=True)
