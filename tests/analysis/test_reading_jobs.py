"""The reads the window's jobs make through the application layer (app.analysis.reading.read_one): progress,
cancel, the content digest; and the LPARs and nodes a picture selects (app.analysis.selection), in the tree's order.

Digests are checked against hashlib's SHA-1 of the file's bytes; node orders against the engine's own tree
(app.engine.tree.build_tree, the nodes the window shows)."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.analysis import reading
from app.analysis.selection import counter_nodes, pick_lpars
from app.formats.schema import Cancelled

SAMPLES = Path(__file__).resolve().parents[2] / "resources" / "samples"
SMF = SAMPLES / "after_z16_ZOSB_smf113.vbs.gz"


@pytest.fixture
def own_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("NESTSCOPE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("NESTSCOPE_CACHE", "1")
    return tmp_path / "cache"


@pytest.mark.parametrize("cached", [False, True], ids=["decoder", "cache"])
def test_read_one_gives_the_files_sha1_beside_the_result(cached, own_cache):
    want = hashlib.sha1(SMF.read_bytes()).hexdigest()    # the bytes as stored (gzip), not the decompressed ones
    seen: list[float] = []
    result, digest = reading.read_one(str(SMF), cached=cached, progress=seen.append, digest=True)
    assert digest == want
    assert result.readable and len(result.samples) > 0
    assert seen and all(0.0 <= f <= 1.0 for f in seen) and seen == sorted(seen)   # fractions, never going back
    if cached:      # the second read comes from the cache entry, its digest with it (no hashing again)
        from app.cache import wait_for_writes

        wait_for_writes()
        again, digest2 = reading.read_one(str(SMF), cached=True, digest=False)
        assert digest2 == want and len(again.samples) == len(result.samples)


def test_without_a_digest_a_fresh_read_gives_none():
    assert reading.read_one(str(SMF), digest=False)[1] == ""


def test_file_digest_of_what_is_not_a_regular_file_is_empty(tmp_path):
    assert reading.file_digest(tmp_path) == ""                    # a folder
    assert reading.file_digest(tmp_path / "missing.smf") == ""    # nothing there


@pytest.mark.parametrize("cached", [False, True], ids=["decoder", "cache"])
def test_a_cancel_check_that_answers_yes_stops_the_read(cached, own_cache):
    with pytest.raises(Cancelled):
        reading.read_one(str(SMF), cached=cached, cancel=lambda: True, digest=True)
    with pytest.raises(Cancelled):      # read_files lets it through: a cancelled read is no "cannot be read"
        reading.read_files([str(SMF)], cached=cached, cancel=lambda: True)


def test_read_files_progress_gives_each_file_an_equal_share(monkeypatch):
    def read(path, progress=None, **_kw):
        progress(0.5)
        progress(1.0)
        return f"result of {path}"
    monkeypatch.setattr("app.formats.read_file", read)
    seen: list[float] = []
    got = reading.read_files(["a", "b", "a"], progress=seen.append)
    assert got.results == ["result of a", "result of b", "result of a"]
    # a: 0.5 and 1.0 of the first third, b: of the second, the second a is the first read again (no calls)
    assert seen == pytest.approx([0.5 / 3, 1 / 3, 1.5 / 3, 2 / 3, 1.0])


# -- the picture's LPARs and nodes: the tree's, in its order -----------------------------------------------------
@pytest.fixture(scope="module")
def sample_ws(sample_result):
    from app.engine import Workspace

    ws = Workspace(cache=False)
    ws.add_all([sample_result(n) for n in ("after_z16_ZOSA_smf113.rdw.gz", "after_z16_ZOSB_smf113.vbs.gz",
                                            "after_VMSYS1_monwrite.mondata.gz")])
    return ws


def _tree_keys(ws, level: str) -> list[tuple]:
    out = []

    def walk(nodes):
        for n in nodes:
            if n.level == level and not (n.info or {}).get("partition_only"):
                out.append(tuple(n.key))
            walk(n.children)
    walk(ws.tree(deep=True, values=False))
    return out


@pytest.mark.parametrize("level", ["cec", "lpar", "class", "cpu"])
def test_counter_nodes_are_the_trees_nodes_in_its_order(sample_ws, level):
    keys = counter_nodes(sample_ws, level)
    assert keys == _tree_keys(sample_ws, level) and keys


def test_counter_nodes_under_some_lpars(sample_ws):
    lpar = counter_nodes(sample_ws, "lpar")[0]
    cpus = counter_nodes(sample_ws, "cpu", [lpar[1:3]])
    assert cpus and all(k[1:3] == lpar[1:3] for k in cpus)
    assert cpus == [k for k in _tree_keys(sample_ws, "cpu") if k[1:3] == lpar[1:3]]


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_pick_lpars_matches_names_case_blind_in_tree_order(sample_ws, data):
    lpars = _tree_keys(sample_ws, "lpar")
    names = sorted({k[2] for k in lpars})
    picked = data.draw(st.lists(st.sampled_from(names), max_size=len(names)))
    spelled = [data.draw(st.sampled_from([n, n.lower(), n.title()])) for n in picked]
    unknown = data.draw(st.lists(st.sampled_from(["NOPE", "zz9"]), max_size=2))
    chosen, missing, have = pick_lpars(sample_ws, spelled + unknown or None)
    assert have == names
    if not spelled + unknown:             # no names: the tree's first LPAR (what the window selects first)
        assert chosen == lpars[:1] and missing == []
        return
    assert chosen == [k for k in lpars if k[2] in set(picked)]
    assert missing == unknown
