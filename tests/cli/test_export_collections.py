"""``nestscope export`` runs with fewer garbage collections (app.commands.export.few_collections): the objects
alive when it starts (the imports) and when the writers start are frozen out of the collector's passes, the
youngest generation is collected every 20,000 new objects; the threshold is set back at the end."""

from __future__ import annotations

import gc
from pathlib import Path

SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "samples"
BEFORE = str(SAMPLES / "before_z15_ZOSA_smf113.rdw.gz")
AFTER = str(SAMPLES / "after_z16_ZOSA_smf113.rdw.gz")


def test_the_export_runs_with_the_imports_frozen_and_sets_the_threshold_back(monkeypatch, tmp_path):
    import app.export
    from app.cli import main

    seen = {}
    real = app.export.export

    def spy(req, path, *a, **kw):
        seen["threshold"], seen["frozen"] = gc.get_threshold(), gc.get_freeze_count()
        seen["pandas frozen"] = _frozen(__import__("pandas").DataFrame)     # a class the imports made
        return real(req, path, *a, **kw)
    monkeypatch.setattr(app.export, "export", spy)
    before = gc.get_threshold()
    gc.unfreeze()
    try:
        assert main(["export", "--before", BEFORE, "--after", AFTER, "--out", str(tmp_path / "d.pptx")]) == 0
        assert seen["threshold"][0] == max(before[0], 20_000) and seen["threshold"][1:] == before[1:]
        assert seen["frozen"] > 10_000 and seen["pandas frozen"]
        assert gc.get_threshold() == before                  # set back
    finally:
        gc.unfreeze()


def _frozen(obj) -> bool:
    """``obj`` (a GC-tracked object) is in the permanent generation: in no generation gc.get_objects lists."""
    return gc.is_tracked(obj) and not any(o is obj for g in range(3) for o in gc.get_objects(g))
