"""Help > User Guide: docs/user-guide.md shown in the app (Markdown with its screenshots)."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import QUrl
from PySide6.QtGui import QImage, QPixmap, QTextCursor, QTextDocument
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTextBrowser, QVBoxLayout, QWidget

from app.ui import messages as M

GUIDE = Path(__file__).resolve().parents[2] / "docs" / "user-guide.md"
IMAGE_WIDTH = 820   # px: screenshots scaled to the dialog (they are 1024-1440 px wide)


def guide_text() -> str:
    """The guide's Markdown (a short note naming where it should be when the file is missing)."""
    try:
        return GUIDE.read_text(encoding="utf-8")
    except OSError:
        return M.GUIDE_MISSING.format(path=GUIDE)


class GuideDialog(QDialog):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle(M.GUIDE_TITLE)
        self.resize(900, 700)
        self.browser = QTextBrowser()
        self.browser.setOpenExternalLinks(True)
        self.browser.setSearchPaths([str(GUIDE.parent)])
        self.browser.document().setBaseUrl(QUrl.fromLocalFile(str(GUIDE.parent) + "/"))
        self.browser.setMarkdown(guide_text())
        self._fit_images(IMAGE_WIDTH)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        lay = QVBoxLayout(self)
        lay.addWidget(self.browser, 1)
        lay.addWidget(buttons)

    def _fit_images(self, width: int) -> None:
        """Scale every image of the guide to ``width`` (height in proportion)."""
        doc = self.browser.document()
        block = doc.begin()
        while block.isValid():
            it = block.begin()
            while not it.atEnd():
                frag = it.fragment()
                fmt = frag.charFormat()
                if frag.isValid() and fmt.isImageFormat():
                    img = fmt.toImageFormat()
                    image = doc.resource(QTextDocument.ResourceType.ImageResource, QUrl(img.name()))
                    if isinstance(image, QImage | QPixmap) and image.width() > width:
                        img.setWidth(width)
                        img.setHeight(image.height() * width / image.width())
                        cursor = QTextCursor(doc)
                        cursor.setPosition(frag.position())
                        cursor.setPosition(frag.position() + frag.length(), QTextCursor.MoveMode.KeepAnchor)
                        cursor.setCharFormat(img)
                it += 1
            block = block.next()
