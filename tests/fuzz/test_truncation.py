"""Every truncation point of a small file of each kind, plain and gzipped (issue 14): what is complete
before the cut is read unchanged, and the cut is one finding (none when the cut falls exactly between
records/blocks: such a file is indistinguishable from a complete one)."""

from __future__ import annotations

import gzip
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
for _p in (str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "fuzz")):
    if _p not in sys.path:
        sys.path.insert(0, _p)

import pytest  # noqa: E402

import corpus as C  # noqa: E402
import harness as H  # noqa: E402
from app.formats import read_bytes  # noqa: E402

SMF = C.smf_file(6)                                  # 6 x 244 = 1,464 bytes
MON = C.mon_file(1, cpus=2)                          # 4 pages = 16,384 bytes
REF = {"smf": H.reference("smf", "rdw", SMF), "monwrite": H.reference("monwrite", "monwrite", MON)}
READ = {"smf": H.smf_items, "monwrite": H.mon_items}
BOUNDS = {"smf": {s for s, _e in REF["smf"].units} | {len(SMF)},
          "monwrite": {s for s, _e in REF["monwrite"].units} | {len(MON)}}


def _expect(kind: str, cut: int) -> list[tuple[int, object]]:
    return [(it.offset, it.key) for it in REF[kind].items if it.end <= cut]


@pytest.mark.parametrize("kind", ["smf", "monwrite"])
def test_every_truncation_point_plain(kind):
    data = REF[kind].data
    bad = []
    for cut in range(1, len(data) + 1):
        items, findings = READ[kind](data[:cut])
        want = _expect(kind, cut)
        last = max(b for b in BOUNDS[kind] if b <= cut) if cut >= min(BOUNDS[kind]) else 0
        if kind == "smf" and last > 0:                     # SMF: zeros after the last record read as padding
            n_find = 0 if not any(data[last:cut]) else 1
        else:
            n_find = 0 if cut in BOUNDS[kind] else 1
        if items != want or len(findings) != n_find or any(f.offset is None for f in findings):
            bad.append((cut, len(items), len(want), [f.code for f in findings]))
    assert not bad, f"{len(bad)} cut points wrong, first: {bad[:5]}"


@pytest.mark.parametrize("kind", ["smf", "monwrite"])
def test_every_truncation_point_gzipped(kind):
    data = REF[kind].data
    gz = gzip.compress(data, mtime=0)
    read = H.gz_then(READ[kind])
    clean = [(it.offset, it.key) for it in REF[kind].items]
    bad = []
    for cut in range(1, len(gz)):
        items, findings = read(gz[:cut])
        codes = [f.code for f in findings]
        prefix = items == clean[:len(items)]
        if cut == 1:                                       # one byte: not even recognisable as gzip
            ok = items == [] and len(codes) == 1
        else:
            ok = prefix and codes.count("gzip-cut") == 1 and all(c in ("gzip-cut", "truncated-record", "truncated",
                                                                       "unknown-framing") for c in codes)
        if not ok:
            bad.append((cut, len(items), codes))
    assert not bad, f"{len(bad)} cut points wrong, first: {bad[:5]}"


@pytest.mark.parametrize("kind,step", [("smf", 61), ("monwrite", 1021)])
def test_truncation_end_to_end_spot_checks(kind, step):
    """The same at reader level (samples and ReadResult findings) on a spread of cut points."""
    data = REF[kind].data
    full = read_bytes(data, H.NAME)
    for cut in list(range(step, len(data), step)):
        r = read_bytes(data[:cut], H.NAME)
        want = sum(1 for it in REF[kind].items if it.end <= cut)
        assert len(r.samples) == want, (cut, len(r.samples), want)
        assert list(r.samples["B0"]) == list(full.samples["B0"][:want]) if want else True
        if cut not in BOUNDS[kind]:
            assert r.findings and all(f.offset is not None for f in r.findings if f.severity != "info"), cut
