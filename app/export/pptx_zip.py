"""The deck's zip: python-pptx's package written at a lower deflate level.

python-pptx writes a presentation with :mod:`zipfile` at zlib's default level (6) and has no option for it.  A
comparison deck is about 3 MB of parts (chart XML of thousands of points, the charts' embedded workbooks): saving
it takes about 155 ms at level 6 and 120 ms at level 1, the file about 15 % larger (956 -> 1,098 KB with its
charts' workbooks at level 1 too).  The parts'
bytes are the ones python-pptx writes, in its order; only their compression differs.  Each part (and each part
of a chart's workbook) is deflated by the fastest raw deflate at hand (:func:`deck_deflater`): ISA-L's level 1
(the ``isal`` package) deflates a cold comparison deck's 2.9 MB of parts in about 11 ms where zlib's level 1 takes
73 ms, into a smaller file (1,046 KB against 1,076 KB); zlib-ng's level 1 (27 ms, 1,230 KB) when ISA-L is
missing, else zlib's.  (Deflating each part on a
second thread while the next ones are serialized, as the workbook writer does for its big parts, measured no
faster than level 1 in line: the parts are small.)  With another python-pptx, whose package writer this does
not know, the deck is saved by python-pptx itself.
"""

from __future__ import annotations

import zipfile
import zlib
from typing import Any

DECK_ZIP_LEVEL = 1            # the deck's parts (and its charts' embedded workbooks) deflated at this level
_DEFLATE: list = []           # the module deck_deflater takes its compressobj from (found once)


def deflate_module() -> Any:
    """The zlib-like module the deck's parts are deflated with: ISA-L's ``isal.isal_zlib``, else zlib-ng's
    ``zlib_ng.zlib_ng``, else :mod:`zlib` (each writes a standard raw deflate stream: any unzip reads it)."""
    if not _DEFLATE:
        try:
            from isal import isal_zlib as mod
        except ImportError:
            try:
                from zlib_ng import zlib_ng as mod
            except ImportError:
                mod = zlib
        _DEFLATE.append(mod)
    return _DEFLATE[0]


def deck_deflater(level: int | None = None) -> Any:
    """A raw deflate compressobj (``compress``, ``flush``: what zipfile asks of one) at ``level`` (default
    :data:`DECK_ZIP_LEVEL`) of :func:`deflate_module` (ISA-L's levels are 0-3: a higher level is its 3)."""
    mod = deflate_module()
    level = DECK_ZIP_LEVEL if level is None else level
    if getattr(mod, "ISAL_BEST_COMPRESSION", None) is not None:
        level = min(level, mod.ISAL_BEST_COMPRESSION)
    return mod.compressobj(level, mod.DEFLATED, -15)


def deflating(part: Any, mode: str) -> bool:
    """``part`` (what ``ZipFile.open`` returned) is a member being written that zipfile deflates: its compressor
    (zipfile's private ``_compressor``, looked for, never assumed) may be swapped for another raw deflater."""
    info = getattr(part, "_zinfo", None)
    return mode == "w" and getattr(part, "_compressor", None) is not None and info is not None \
        and info.compress_type == zipfile.ZIP_DEFLATED


class _DeckZipFile(zipfile.ZipFile):
    """zipfile.ZipFile whose deflated members are deflated by :func:`deck_deflater` at its level."""

    def open(self, name: Any, mode: str = "r", pwd: Any = None, *, force_zip64: bool = False) -> Any:
        part = super().open(name, mode, pwd, force_zip64=force_zip64)
        if deflating(part, mode):
            part._compressor = deck_deflater(self.compresslevel)
        return part


class _DeckZipWriter:
    """python-pptx's physical package writer (``write(pack_uri, blob)``, a context manager closing the zip) at
    deflate ``level``."""

    def __init__(self, pkg_file: Any, level: int = DECK_ZIP_LEVEL) -> None:
        self.zf = _DeckZipFile(pkg_file, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=level,
                               strict_timestamps=False)

    def __enter__(self) -> _DeckZipWriter:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.zf.close()

    def write(self, pack_uri: Any, blob: bytes) -> None:
        self.zf.writestr(pack_uri.membername, blob)


def save_package(prs: Any, path: Any, level: int = DECK_ZIP_LEVEL) -> None:
    """Save ``prs`` to ``path`` (a file name or a binary file) as python-pptx's ``save`` does, its zip at deflate
    ``level``; python-pptx's own save when its package writer is not the one this knows."""
    try:
        from pptx.opc.serialized import PackageWriter

        package = prs.part.package
        writer = PackageWriter(path, package._rels, tuple(package.iter_parts()))
        steps = (writer._write_content_types_stream, writer._write_pkg_rels, writer._write_parts)
    except (ImportError, AttributeError, TypeError):
        prs.save(path)
        return
    with _DeckZipWriter(path, level) as phys:
        for step in steps:
            step(phys)
