"""app/textsafe.py: the one rule for names from the data in every output (issue 20, "Names from the data")."""

from __future__ import annotations

import csv
import io
import json
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from app.textsafe import FORMULA_START, csv_line, csv_text, display_text, json_text, paste_text, terminal_text

# names as the readers make them: 4 or 8 EBCDIC bytes decoded with cp037 (every byte is a character),
# and any text at all (a name may come through other paths too)
EBCDIC_NAMES = st.binary(min_size=0, max_size=8).map(lambda b: b.decode("cp037"))
NAMES = st.one_of(EBCDIC_NAMES, st.text(max_size=12))
FAST = settings(max_examples=150, deadline=None)


def test_display_text_escapes_control_characters():
    # X'27BAF2D1' is ESC [ 2 J in cp037: "clear screen" when printed raw
    sid = bytes.fromhex("27BAF2D1").decode("cp037")
    assert sid == "\x1b[2J"
    assert display_text(sid) == "\\x1b[2J"
    assert display_text("A\nB\rC\tD\x00E\x7fF\x85G") == "A\\nB\\rC\\tD\\x00E\\x7fF\\x85G"
    assert display_text("ZOSA") == "ZOSA" and display_text("Z OS") == "Z OS"
    assert display_text("\u200e\u2028\U000f0000") == "\\u200e\\u2028\\U000f0000"   # format, separator, private
    assert display_text(3931) == "3931"


def test_terminal_text_keeps_line_breaks_only():
    assert terminal_text("a\x1b[2J\nb\tc\n") == "a\\x1b[2J\nb\\tc\n"


def test_csv_cells_starting_like_a_formula_are_neutralised_and_quoted():
    cells = [csv_text(v) for v in ("=1+1", "@SUM(A1)", "=CMD|/C calc", "+1", "-1", "\t=1", "\r=1+", "ZOSA")]
    assert cells == ["'=1+1", "'@SUM(A1)", "'=CMD|/C calc", "'+1", "'-1", "'\\t=1", "'\\r=1+", "ZOSA"]
    line = csv_line(cells + ["1.5", ""])
    assert line == ('"\'=1+1","\'@SUM(A1)","\'=CMD|/C calc","\'+1","\'-1","\'\\t=1","\'\\r=1+",ZOSA,1.5,\n')
    # the case: a CR inside a name never starts a new row that begins with =1+
    assert list(csv.reader(io.StringIO(csv_line([csv_text("A\r=1+2"), "1"])))) == [["A\\r=1+2", "1"]]
    assert csv_line([csv_text('a,"b"')]) == '"a,""b"""\n'


@FAST
@given(st.lists(NAMES, min_size=1, max_size=6))
def test_any_names_give_one_csv_row_of_safe_cells(names):
    text = csv_line([csv_text(n) for n in names])
    assert text.count("\n") == 1 and text.endswith("\n")          # one physical line, whatever the names
    rows = list(csv.reader(io.StringIO(text)))
    assert rows == [[csv_text(n) for n in names]]                  # cells read back as written
    for n, cell in zip(names, rows[0]):
        assert not cell.startswith(FORMULA_START)
        assert cell.isprintable()
        assert cell in (display_text(n), "'" + display_text(n))


@FAST
@given(NAMES)
def test_display_text_is_printable_and_keeps_printable_names(name):
    shown = display_text(name)
    assert shown.isprintable()
    if name.isprintable():
        assert shown == name


@FAST
@given(st.lists(NAMES, max_size=5))
def test_terminal_text_holds_no_control_characters(names):
    text = "\n".join(names)
    out = terminal_text(text)
    assert all(ch.isprintable() or ch == "\n" for ch in out)
    assert out.count("\n") == text.count("\n")


@FAST
@given(NAMES)
def test_json_text_escapes_every_control_character_and_reads_back(name):
    text = json_text(json.dumps({"system": name}))
    assert text.isprintable() and text.isascii()
    assert json.loads(text) == {"system": name}


def test_paste_text_neutralises_formulas_and_keeps_numbers():
    for name in ("=1+2", "@SUM", "+A1", "-A1", "=CMD|/C"):
        assert paste_text(name) == "'" + name
    for shown in ("-0.38", "+1.2", "1,234", "12.5%", "1e-05", "-", "n/a", "ZOSA", "3931-123F5"):
        assert paste_text(shown) == shown
    assert paste_text("\tX\r\n") == "\\tX\\r\\n"          # a tab or line break never splits a pasted cell


@FAST
@given(NAMES)
def test_pasted_names_never_start_a_formula_nor_split_a_cell(name):
    cell = paste_text(name)
    assert cell.isprintable()
    assert not cell.startswith(FORMULA_START) or re.fullmatch(r"[+-][\d.,e%+-]*", cell)
