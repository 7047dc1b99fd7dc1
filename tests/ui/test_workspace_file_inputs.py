"""Save Workspace never writes over a data file the workspace opens (a save dialog can be pointed at one)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from app.ui.workspace_file import WorkspaceFileError, WorkspaceState, load, save

SAMPLE = Path(__file__).resolve().parents[2] / "resources" / "samples" / "after_z16_ZOSA_smf113.rdw.gz"


def test_save_over_an_opened_data_file_is_refused(tmp_path):
    folder = tmp_path / "data"          # (tmp_path holds the tests' settings folder too)
    folder.mkdir()
    data = folder / "zosa.rdw.gz"
    shutil.copyfile(SAMPLE, data)
    before = data.read_bytes()
    state = WorkspaceState(files=[str(data)])
    with pytest.raises(WorkspaceFileError, match="is one of the workspace's data files"):
        save(state, data)
    assert data.read_bytes() == before
    assert sorted(p.name for p in folder.iterdir()) == ["zosa.rdw.gz"]          # no .tmp left either
    ws = folder / "review.nsw"
    save(state, ws)                                                            # another name: saved
    assert load(ws).files == [str(data.resolve())]
