"""app.userdirs: the user's cache folder found without platformdirs on Linux is the one platformdirs gives."""

import sys

import pytest

from app import userdirs

platformdirs = pytest.importorskip("platformdirs")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the XDG rule is Linux's")
@pytest.mark.parametrize("xdg, home", [(None, "/home/u"), ("/x/cache", "/home/u"), ("", "/home/u/"),
                                       ("relative/cache", "/h"), ("/x/c/", None)])
def test_the_xdg_cache_folder_is_platformdirs_own(monkeypatch, xdg, home):
    for k in ("NESTSCOPE_CACHE", "NESTSCOPE_CACHE_DIR", "ANDROID_DATA", "ANDROID_ROOT"):
        monkeypatch.delenv(k, raising=False)
    for k, v in (("XDG_CACHE_HOME", xdg), ("HOME", home)):
        if v is None:
            monkeypatch.delenv(k, raising=False)
        else:
            monkeypatch.setenv(k, v)
    want = platformdirs.user_cache_dir("nestscope", appauthor=False)
    # by hand: an absolute XDG_CACHE_HOME wins, else HOME's .cache (a relative XDG_CACHE_HOME is ignored)
    by_hand = {("/x/cache", "/home/u"): "/x/cache/nestscope", (None, "/home/u"): "/home/u/.cache/nestscope",
               ("", "/home/u/"): "/home/u/.cache/nestscope", ("relative/cache", "/h"): "/h/.cache/nestscope",
               ("/x/c/", None): "/x/c/nestscope"}[(xdg, home)]
    assert userdirs._xdg_cache_dir() == want == by_hand
    assert userdirs.user_cache_dir() == want


def test_no_absolute_home_leaves_it_to_platformdirs(monkeypatch):
    monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    monkeypatch.setenv("HOME", "relative")
    assert userdirs._xdg_cache_dir() is None
    monkeypatch.setenv("HOME", "/h")
    monkeypatch.setenv("ANDROID_DATA", "/data")
    assert userdirs._xdg_cache_dir() is None
    monkeypatch.setenv("NESTSCOPE_CACHE", "1")
    monkeypatch.setenv("NESTSCOPE_CACHE_DIR", "/mine")
    assert userdirs.user_cache_dir() == "/mine"
    monkeypatch.setenv("NESTSCOPE_CACHE", "0")
    assert userdirs.user_cache_dir() is None


def _run_py(code: str, tmp, **env) -> "subprocess.CompletedProcess[str]":
    import os
    import subprocess

    base = {k: v for k, v in os.environ.items() if k != "NESTSCOPE_SETTINGS_FILE"}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          env=base | {"TMPDIR": str(tmp)} | env, check=True)


def test_throwaway_settings_folder_is_made_once_and_gone_at_exit(tmp_path):
    tmp = tmp_path / "t"
    tmp.mkdir()
    code = ("import os; from app.userdirs import throwaway_settings as t; p = t(); "
            "assert t() == p == os.environ['NESTSCOPE_SETTINGS_FILE']; open(p, 'w').write('[x]'); "
            "assert len(os.listdir(os.path.dirname(os.path.dirname(p)))) == 1; print(p)")
    path = _run_py(code, tmp).stdout.strip()
    assert path.startswith(str(tmp)) and path.endswith("settings.ini")
    assert list(tmp.iterdir()) == []            # the process's folder removed at its exit, the file with it


def test_throwaway_settings_keeps_a_chosen_file(tmp_path):
    tmp = tmp_path / "t"
    tmp.mkdir()
    chosen = str(tmp_path / "mine.ini")
    out = _run_py("from app.userdirs import throwaway_settings as t; print(t())", tmp,
                  NESTSCOPE_SETTINGS_FILE=chosen).stdout.strip()
    assert out == chosen and list(tmp.iterdir()) == []


def test_snapshot_leaves_no_folder_behind(tmp_path):
    # `nestscope snapshot` once made a settings folder in the temp dir on every run and never removed it
    tmp = tmp_path / "t"
    tmp.mkdir()
    png = tmp_path / "s.png"
    import os
    import subprocess

    env = {k: v for k, v in os.environ.items() if k != "NESTSCOPE_SETTINGS_FILE"}
    r = subprocess.run([sys.executable, "-m", "app", "snapshot", "--out", str(png), "--size", "800x600"],
                       capture_output=True, text=True, timeout=300,
                       env=env | {"TMPDIR": str(tmp), "QT_QPA_PLATFORM": "offscreen", "NESTSCOPE_CACHE": "0"})
    assert r.returncode == 0, r.stderr
    assert png.stat().st_size > 10_000
    assert [p.name for p in tmp.iterdir() if p.name.startswith("nestscope")] == []
