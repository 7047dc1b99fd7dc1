"""Builders and checks of the names-from-the-data tests (issue 20): files whose system ids, LPAR and partition
names, models and serials are arbitrary text, written with the project's SMF 113 and MONWRITE writers; and the
checks that an output shows them safely (app/textsafe.py)."""

from __future__ import annotations

import csv
import datetime as dt
import html
import io
import json
import re
import zipfile
from pathlib import Path

import openpyxl
import pandas as pd
from hypothesis import strategies as st

from app.formats import monwrite_writer, smf113_writer
from app.sample.model import CecModel, ClassModel, LparModel, make_samples, to_absolute
from app.textsafe import FORMULA_START

MIX = {"L2P": 76.0, "L3P": 15.0, "L4LP": 5.0, "L4RP": 1.5, "MEMP": 2.5}
START = dt.datetime(2026, 3, 2, 8, 0)
# the names: a formula, a DDE command, a CR that started a new CSV row, ESC [ 2 J (X'27BAF2D1' in cp037:
# clears the screen), NUL and ESC that broke the PPTX export; a name XlsxWriter took for a cell reference; names
# that rich text (the window's legends and titles) would read as markup
NASTY = ["=1+2", "@SUM", "=CMD|/C", "A\r=1+", "\x1b[2J", "\x00\x1b", "+1", "-1", "X!A1", "\t=1", "&lt;", "<b>X"]


def ebcdic_name(n: int):
    """Names as the readers see them: ``n`` arbitrary bytes decoded with cp037, then blank/NUL-stripped at the
    end (the reader strips; the writer pads)."""
    return st.binary(min_size=n, max_size=n).map(lambda b: b.decode("cp037").rstrip(" \x00")).filter(bool)


def smf_file(folder: Path, system: str | list[str], seqcode: str, model: str) -> Path:
    """A z16 subtype 1 file of one LPAR per system id (z/OS: the LPAR is named by the system id), 3 intervals."""
    systems = [system] if isinstance(system, str) else system
    cec = CecModel("z16", seqcode, [LparModel(s, s, [ClassModel("GCP", 2, 50, 3.0, 3.0, MIX, 60)]) for s in systems])
    samples, _ = make_samples(cec, START, intervals=3, interval_s=900.0, seed=1)
    recs = smf113_writer.encode_samples(samples.assign(model=model), 1)
    return smf113_writer.write_smf_file(folder / "names.smf", recs, framing="rdw")


def zvm_file(folder: Path, system: str, lpar: str, other: str | list[str]) -> Path:
    """A z/VM MONWRITE file: LPAR ``lpar`` of system ``system`` with counters, and partition data (D0R16) of
    itself and of the partition(s) ``other`` (partition data only)."""
    others = [other] if isinstance(other, str) else other
    cec = CecModel("z16", "00000000000ABCDE", [LparModel(lpar, system, [ClassModel("IFL", 2, 50, 2.2, 2.2, MIX, 70)],
                                                        os="z/VM")])
    samples, _ = make_samples(cec, START, intervals=4, interval_s=60.0, seed=2)
    times = sorted(samples["time"].unique())
    parts = pd.DataFrame([{"cec": cec.cec, "lpar": name, "lpar_number": num, "class": "IFL", "cpus": 2,
                           "weight": 100, "capped": False, "busy_pct": 40.0, "time": t}
                          for t in times for name, num in [(lpar, 1)] + [(o, k + 2) for k, o in enumerate(others)]])
    p = folder / "names.mondata"
    monwrite_writer.write_samples(to_absolute(samples), parts, path=p, interval_s=60.0)
    return p


# ------------------------------------------------------------------ checks
def shown_safely(text: str) -> None:
    """Terminal text: every character printable, or a line break."""
    bad = sorted({repr(ch) for ch in text if not (ch.isprintable() or ch == "\n")})
    assert bad == [], f"control characters reach the terminal: {bad}"


def csv_safely(text: str, n_rows: int) -> list[list[str]]:
    """A CSV document: ``n_rows`` data rows after the header (a name never starts a row), every cell
    printable and none starting like a formula."""
    shown_safely(text)
    rows = list(csv.reader(io.StringIO(text)))
    assert len(rows) == n_rows + 1
    assert len({len(r) for r in rows}) == 1
    for r in rows:
        for cell in r:
            assert cell.isprintable()
            assert not cell.startswith(FORMULA_START), cell
    return rows


def json_safely(text: str):
    assert text.isascii() and all(ch.isprintable() or ch in "\n" for ch in text)
    return json.loads(text)


def workbook_safely(path_or_blob) -> tuple[list[str], list[str]]:
    """An XLSX workbook: no formula cell anywhere (XML and openpyxl), every text cell printable, every chart
    series named by a cell reference; returns (the cell texts, the charts' series names)."""
    src = io.BytesIO(path_or_blob) if isinstance(path_or_blob, bytes) else path_or_blob
    chart_names = []
    with zipfile.ZipFile(src) as z:
        for n in z.namelist():
            if n.startswith("xl/worksheets/") and n.endswith(".xml"):
                assert "<f>" not in z.read(n).decode("utf-8"), f"a formula cell in {n}"
            if n.startswith("xl/charts/chart") and n.endswith(".xml"):
                # a series is named by a reference to a cell of our own sheets, never by a name parsed as one
                xml = z.read(n).decode("utf-8")
                for ref, cached in re.findall(r"<c:tx><c:strRef><c:f>([^<]*)</c:f><c:strCache>.*?<c:v>([^<]*)</c:v>",
                                              xml):
                    assert re.fullmatch(r"(Timeline|Compare)!\$[A-Z]+\$\d+", ref), ref
                    chart_names.append(html.unescape(cached))
    if isinstance(src, io.BytesIO):
        src.seek(0)
    wb = openpyxl.load_workbook(src)
    texts = []
    for sh in wb.worksheets:
        for row in sh.iter_rows():
            for c in row:
                assert c.data_type != "f", (sh.title, c.coordinate, c.value)
                if isinstance(c.value, str):
                    assert c.value.isprintable(), (sh.title, c.coordinate, c.value)
                    texts.append(c.value)
    return texts, chart_names


def deck_safely(path: Path) -> str:
    """A PPTX deck: opens, every slide text printable (line breaks allowed), every embedded chart workbook
    holds names as text; returns all slide text."""
    from pptx import Presentation

    with zipfile.ZipFile(path) as z:
        blobs = [z.read(n) for n in z.namelist() if n.startswith("ppt/embeddings/") and n.endswith(".xlsx")]
    assert blobs, "the deck has native charts with embedded workbooks"
    names = []
    for b in blobs:
        names += workbook_safely(b)[0]
    texts = []
    for slide in Presentation(str(path)).slides:
        for shape in slide.shapes:
            if shape.has_text_frame:
                texts.append(shape.text_frame.text)
            if shape.has_table:
                texts += [c.text for row in shape.table.rows for c in row.cells]
            if shape.has_chart:
                texts += [s.name for p in shape.chart.plots for s in p.series]
        texts.append(slide.notes_slide.notes_text_frame.text)
    text = "\n".join(texts + names)
    assert all(ch.isprintable() or ch in "\n\v" for ch in text)
    return text
