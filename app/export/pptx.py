"""PPTX export (python-pptx, 16:9): the file.

A plain deck: title, the summary of the chosen level as native tables in the presentation's column layout (split
over slides by rows and by columns, 11 pt, never below :data:`MIN_PT`), native editable charts (XY lines over the
interval end, in the request's zone) of CPI with its two parts, L1MP, the sourcing mix, RNI (only where a formula exists) and
LPARCPU, and an appendix with the provenance.

A comparison deck tells the before/after story (:mod:`app.export.pptx_compare`): title, executive summary, the
before/after table, the CPI waterfalls, the overlays, the LPAR configuration, each side's own slides over its own
window, the appendix.

Every slide has a real title placeholder and notes: what the slide shows and how it was computed, then the
provenance (files with SHA-256, window, shift, formula sets, app).  Core properties are the deck's own.
"""

from __future__ import annotations

from app.export.pptx_parts import MIN_PT, SLIDE_H, SLIDE_W, TABLE_PT, Deck
from app.export.pptx_slides import appendix_slide, chart_deck, chart_slides, summary_slides, window_text
from app.export.provenance import provenance, provenance_lines
from app.export.story import default_title, side_text

__all__ = ["write_pptx", "MIN_PT", "TABLE_PT", "SLIDE_W", "SLIDE_H", "chart_slides", "deck_title",
           "DEFAULT_TITLE"]

DEFAULT_TITLE = "CPU MF analysis"


class _Ticks:
    """The writers' progress: a fixed fraction where one is given, else one more step of about ``total``."""

    def __init__(self, steps, total: int = 40):
        self.steps, self.total, self.n = steps, total, 0

    def __call__(self, fraction, text: str) -> None:
        self.n += 1
        f = fraction if fraction is not None else 0.05 + 0.9 * min(1.0, self.n / self.total)
        self.steps(f, text)


def deck_title(request) -> str:
    """The deck's title: the request's, or for a comparison "<LPARs>: <before gen> -> <after gen>"."""
    title = (request.title or "").strip()
    if request.comparison is not None and title in ("", DEFAULT_TITLE):
        return default_title(request.comparison)
    return title or DEFAULT_TITLE


def write_pptx(request, path: str, steps) -> dict[str, int]:
    """Write the deck; returns the number of slides per kind (title, executive, summary, chart, compare,
    waterfall, config, appendix)."""
    from app import __version__

    doc = provenance(request)
    lines = provenance_lines(doc)
    title = deck_title(request)
    deck = Deck(title, "\n".join(lines), f"NestScope {__version__}")
    ticks = _Ticks(steps)
    c = request.comparison
    tz = getattr(request, "tz", "utc") or "utc"
    s = deck.slide(title, "title", "", "The deck's title slide: what is compared, over which windows and shift.")
    body = [request.subtitle] if request.subtitle else []
    if c is not None:
        body += [side_text(c.before, tz=tz), side_text(c.after, tz=tz)]
    else:
        body.append(window_text(request.metrics, request.shift, request.workspace, tz))
    body += ["Formula sets: " + (", ".join(doc["formula_sets"].values()) or "-"),
             f"{len(doc['files'])} file(s): " + ", ".join(f["name"] for f in doc["files"][:6])
             + (" ..." if len(doc["files"]) > 6 else ""),
             f"{doc['app']}; provenance in the appendix and in every slide's notes"]
    deck.text(s, 0.6, 2.2, SLIDE_W - 1.2, 4.5, body, pt=16)
    ticks(0.05, "title")
    if c is not None:
        from app.export.pptx_compare import compare_story
        compare_story(deck, request, ticks)
    else:
        sub = window_text(request.metrics, request.shift, request.workspace, tz)
        summary_slides(deck, request.metrics, request.workspace, request.by, ticks, "", sub)
        if request.also_shift is not None:
            from app.export.pptx_compare import shift_pair_slides
            shift_pair_slides(deck, (request.selection(),), request.also_shift, request.by)
        chart_deck(deck, request.metrics, request.workspace, ticks, "", sub, tz)
    if getattr(request, "profile", None):
        from app.export.profile import profile_slides
        profile_slides(deck, request, ticks)
    appendix_slide(deck, lines)
    ticks(0.97, "saving")
    deck.save(path)
    return dict(deck.count)
