"""A file opened again under another spelling of its path (relative, absolute, through '..') comes from the
workspace cache named as it is opened now: result, findings, the samples' and intervals' source column, and so
the exports' "never write over an input file" check (issue 10)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from app import cache as wc
from app.engine import Workspace

SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "samples"
BROKEN = SAMPLES / "broken" / "truncated_smf113.rdw"       # has a finding naming the file


def test_second_spelling_is_the_name_everywhere(tmp_path, monkeypatch):
    d = tmp_path / "data"
    d.mkdir()
    shutil.copy(BROKEN, d / "t.rdw")
    c = wc.Cache(tmp_path / "c")
    monkeypatch.chdir(tmp_path)
    first = "data/t.rdw"                                      # relative, as typed in a shell
    ws1 = Workspace(cache=c)
    ws1.add(wc.read_file(first, cache=c))
    assert set(ws1.intervals["source"].astype(str)) == {first}
    assert any(f.file == first and f.message.startswith(first) for f in ws1.files[0].findings)

    (d / "sub").mkdir()
    monkeypatch.chdir(d / "sub")                              # a later session, started elsewhere
    second = str(d / "sub" / ".." / "t.rdw")                  # the same file, another spelling
    hit = wc.read_file(second, cache=c)
    assert isinstance(hit, wc.CachedReadResult) and hit.file == second
    assert hit.findings and all(f.file == second and f.message.startswith(second + ":") for f in hit.findings)
    assert set(hit.samples["source"].astype(str)) == {second}
    ws2 = Workspace(cache=c)
    ws2.add(hit)
    assert set(ws2.intervals["source"].astype(str)) == {second}          # intervals from the cache, renamed
    assert all(f.file == second for f in ws2.findings if f.file)

    from app.export import ExportRequest

    assert os.path.abspath(ExportRequest(workspace=ws2).input_paths()[0]) == os.path.abspath(str(d / "t.rdw"))
