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
