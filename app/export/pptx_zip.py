"""The deck's zip: python-pptx's package written at a lower deflate level.

python-pptx writes a presentation with :mod:`zipfile` at zlib's default level (6) and has no option for it.  A
comparison deck is about 3 MB of parts (chart XML of thousands of points, the charts' embedded workbooks): saving
it takes about 155 ms at level 6 and 120 ms at level 1, the file about 15 % larger (956 -> 1,098 KB with its
charts' workbooks at level 1 too).  The parts'
bytes are the ones python-pptx writes, in its order; only their compression differs.  (Deflating each part on a
second thread while the next ones are serialized, as the workbook writer does for its big parts, measured no
faster than level 1 in line: the parts are small.)  With another python-pptx, whose package writer this does
not know, the deck is saved by python-pptx itself.
"""

from __future__ import annotations

import zipfile
from typing import Any

DECK_ZIP_LEVEL = 1            # the deck's parts (and its charts' embedded workbooks) deflated at this level


class _DeckZipWriter:
    """python-pptx's physical package writer (``write(pack_uri, blob)``, a context manager closing the zip) at
    deflate ``level``."""

    def __init__(self, pkg_file: Any, level: int = DECK_ZIP_LEVEL) -> None:
        self.zf = zipfile.ZipFile(pkg_file, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=level,
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
