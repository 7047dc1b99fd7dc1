"""A tersed SMF 113 dump in every command (info, report, compare, export, extract) gives the numbers of the plain
file; ``nestscope unterse`` writes the data set."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from app.cli import main
from tests.terse_builders import header, pack_codes, rdw_records, tersed

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "resources" / "samples" / "after_z16_ZOSA_smf113.rdw.gz"
TEXT = ROOT / "tests" / "data" / "terse" / "TERSED" / "FB.XARGS.PACK"


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    """(plain RDW file, the same records tersed with PACK as a VBS data set, a gzip of the tersed file)."""
    d = tmp_path_factory.mktemp("terse")
    recs = rdw_records(gzip.decompress(SAMPLE.read_bytes()))[:300]
    plain = d / "zosa.rdw"
    plain.write_bytes(b"".join((len(r) + 4).to_bytes(2, "big") + b"\0\0" + r for r in recs))
    trs = d / "ZOSA.SMF.DUMP"                    # no telling name: detection is by content
    trs.write_bytes(tersed(recs, "PACK", variable=True, lrecl=32756, spanned=True))
    gz = d / "zosa.trs.gz"
    gz.write_bytes(gzip.compress(trs.read_bytes()))
    return plain, trs, gz


def _out(capsys, argv: list[str]) -> tuple[int, str]:
    rc = main(argv)
    got = capsys.readouterr()
    return rc, got.out + got.err


def test_info(pair, capsys):
    plain, trs, gz = pair
    assert main(["info", str(plain), "--format", "json"]) == 0
    (a,) = json.loads(capsys.readouterr().out)
    for f in (trs, gz):
        assert main(["info", str(f), "--format", "json"]) == 0
        (b,) = json.loads(capsys.readouterr().out)
        assert b["framing"] == ("terse PACK + RDW" if f == trs else "terse PACK + RDW+gzip")
        for k in ("records", "samples", "time_range", "machines", "systems", "classes"):
            assert b[k] == a[k], k
    rc, text = _out(capsys, ["info", str(trs)])
    assert "framing: terse PACK + RDW" in text and "counter samples: 300" in text


@pytest.mark.parametrize("by", ["interval", "lpar"])
def test_report(pair, capsys, by):
    plain, trs, _ = pair
    rc, a = _out(capsys, ["report", str(plain), "--by", by, "--format", "csv"])
    rc2, b = _out(capsys, ["report", str(trs), "--by", by, "--format", "csv"])
    assert rc == rc2 == 0 and a == b and len(a.splitlines()) > 1


def test_compare(pair, capsys):
    plain, trs, gz = pair
    rc, a = _out(capsys, ["compare", "--before", str(plain), "--after", str(plain), "--format", "csv"])
    rc2, b = _out(capsys, ["compare", "--before", str(trs), "--after", str(gz), "--format", "csv"])
    assert rc == rc2 == 0 and a == b


def test_export(pair, tmp_path):
    plain, trs, _ = pair
    assert main(["export", str(plain), "--out", str(tmp_path / "a.csv"), "--by", "class"]) == 0
    assert main(["export", str(trs), "--out", str(tmp_path / "b.csv"), "--by", "class"]) == 0
    assert (tmp_path / "a.csv").read_text() == (tmp_path / "b.csv").read_text()


def test_extract_and_query(pair, tmp_path, capsys):
    plain, trs, _ = pair
    assert main(["extract", str(plain), "--to", str(tmp_path / "a"), "--quiet"]) == 0
    assert main(["extract", str(trs), "--to", str(tmp_path / "b"), "--quiet"]) == 0
    capsys.readouterr()
    rc, a = _out(capsys, ["query", str(tmp_path / "a"), "--by", "class", "--format", "csv"])
    rc2, b = _out(capsys, ["query", str(tmp_path / "b"), "--by", "class", "--format", "csv"])
    assert rc == rc2 == 0 and a == b and "ZOSA" in a


def test_tersed_text_exits_3_and_says_what_it_holds(capsys):
    rc, text = _out(capsys, ["info", str(TEXT)])
    # xargs.1 as FB LRECL=80: 8,960 bytes = 112 records
    assert rc == 3
    assert "is a tersed data set (AMATERSE PACK, RECFM=FB, LRECL=80, 112 records, 8,960 bytes untersed)" in text


def test_unterse_writes_the_data_set(pair, tmp_path, capsys):
    plain, trs, gz = pair
    for src in (trs, gz):
        out = tmp_path / f"{src.name}.rdw"
        rc, text = _out(capsys, ["unterse", str(src), "--out", str(out)])
        assert rc == 0 and out.read_bytes() == plain.read_bytes()
        assert "AMATERSE PACK, RECFM=VBS, LRECL=32760, 300 records" in text
    assert not list(tmp_path.glob(".nestscope-*"))                    # no temporary file left behind


def test_unterse_refuses(pair, tmp_path, capsys):
    plain, trs, _ = pair
    before = trs.read_bytes()
    assert main(["unterse", str(trs), "--out", str(trs)]) == 3           # never over the input
    assert trs.read_bytes() == before
    assert main(["unterse", str(plain), "--out", str(tmp_path / "x")]) == 3
    assert "is not a tersed data set" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_unterse_bomb_writes_nothing(tmp_path, monkeypatch, capsys):
    # SPACK pairs growing like Fibonacci (see tests/formats/test_terse.py): stopped by the ratio check
    bomb = tmp_path / "bomb.trs"
    bomb.write_bytes(header("SPACK", False, 1) + pack_codes([0x82, 0x82, *range(258, 318), 0]))
    monkeypatch.setattr("app.formats.terse.RATIO_FLOOR", 1 << 20)       # not 256 MiB: keep the test quick
    assert main(["unterse", str(bomb), "--out", str(tmp_path / "out")]) == 3
    assert "NESTSCOPE_MAX_RATIO" in capsys.readouterr().err
    assert not (tmp_path / "out").exists() and not list(tmp_path.glob(".nestscope-*"))


def test_unterse_damaged_keeps_what_came_before(pair, tmp_path, capsys):
    _, trs, _ = pair
    cut = tmp_path / "cut.trs"
    cut.write_bytes(trs.read_bytes()[:20000])
    rc, err = _out(capsys, ["unterse", str(cut), "--out", str(tmp_path / "cut.rdw")])
    assert rc == 0 and "terse" in err and "offset 20000" in err
    recs = rdw_records((tmp_path / "cut.rdw").read_bytes())
    assert recs and f"up to output record {len(recs)}" in err
