"""The SHA-256 of a file being extracted, computed in a thread beside the reading of its first chunk.

A file's manifest entry is named by the SHA-256 of its content, and every part file and row it adds carries it;
a file whose content the dataset holds already adds nothing.  Hashing a large plain SMF file takes about a
second per GB (203 MB: 0.2 s), which ``extract`` spent before anything else.  :class:`ContentHash` hashes in a
thread (hashlib lets go of the GIL while it hashes) while the reader decodes the first chunk; the extract
waits for the hash only where it first needs it (the first part file it writes), then checks the dataset's
manifest for it as it did first before (:class:`AlreadyPresent`: the file adds nothing, nothing is written).
The mapped file's pages are handed back as they are hashed, a small slice at a time (the thread runs beside
the reader's chunk: its pages are not resident beside the chunk's decoded samples).
"""

from __future__ import annotations

import hashlib
import threading

__all__ = ["AlreadyPresent", "ContentHash", "sha256_of"]

# bytes hashed between two hand-backs of the mapped file's pages (beside a chunk being decoded: a small slice)
STEP = 2 << 20


def sha256_of(data, step: int = 16 << 20) -> str:
    """SHA-256 of ``data`` read ``step`` bytes at a time (the pages of a memory-mapped file handed back as it
    goes)."""
    from app.formats.chunks import drop_pages

    h = hashlib.sha256()
    with memoryview(data) as mv:
        for a in range(0, len(mv), step):
            h.update(mv[a:a + step])
            drop_pages(data, a, min(a + step, len(mv)))
    return h.hexdigest()


class AlreadyPresent(Exception):
    """The file's content is in the dataset already (raised where its hash is first needed)."""

    def __init__(self, sha: str) -> None:
        super().__init__(sha)
        self.sha = sha


class ContentHash:
    """The SHA-256 of ``data``, computed in a thread started at once; :meth:`result` waits for it.  ``data``
    must stay open until :meth:`result` (or :meth:`wait`) has returned."""

    def __init__(self, data) -> None:
        self._hex: str | None = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(data,), name="nestscope-sha256", daemon=True)
        self._thread.start()

    def _run(self, data) -> None:
        try:
            self._hex = sha256_of(data, STEP)
        except BaseException as exc:        # raised again in the caller's thread by result()
            self._error = exc

    def wait(self) -> None:
        """Until the thread is done (the data may be closed after)."""
        self._thread.join()

    def result(self) -> str:
        self.wait()
        if self._error is not None:
            raise self._error
        assert self._hex is not None
        return self._hex
