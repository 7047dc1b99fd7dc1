#!/usr/bin/env bash
# One entry point for a fresh machine: installs what NestScope needs, then
#   packaging/dev.sh run [FILE...]   opens the window (bundled sample when no file is given)
#   packaging/dev.sh test [ARGS...]  runs the whole test suite (Qt offscreen, in parallel on every core: pytest
#                                    -n auto; ARGS go to pytest, e.g. -m "not slow"); without ARGS it then opens
#                                    the real window under Xvfb and checks its screenshot (packaging/display_check.py,
#                                    unless NESTSCOPE_SKIP_DISPLAY is set), builds the desktop bundle and smoke-runs
#                                    it (packaging/build.sh --smoke) unless NESTSCOPE_SKIP_BUNDLE is set
set -euo pipefail
cd "$(dirname "$0")/.."

need_libs=(libgl1 libegl1 libfontconfig1 libglib2.0-0 libxkbcommon0 libdbus-1-3
           # Qt's xcb platform (a real window on X11: without them `dev.sh run` aborts on a fresh Debian)
           libxcb-cursor0 libxcb-icccm4 libxcb-image0 libxcb-keysyms1 libxcb-randr0 libxcb-render-util0
           libxcb-shape0 libxcb-xinerama0 libxcb-xkb1 libxkbcommon-x11-0
           # an X server for the test command's real-display check (packaging/display_check.py)
           xvfb xauth)
missing=()
if command -v dpkg-query >/dev/null 2>&1; then
  for p in "${need_libs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  python3 -m venv --help >/dev/null 2>&1 || missing+=(python3-venv)
  command -v java >/dev/null 2>&1 || missing+=(default-jre-headless)   # Spark engine (nestscope query --engine spark)
  command -v python3 >/dev/null 2>&1 || missing+=(python3 python3-venv)
  # the SMF reader's compiled kernel (setup.py; optional: without a compiler the numpy path serves)
  command -v cc >/dev/null 2>&1 || missing+=(gcc libc6-dev)
  python3 -c "import os, sysconfig; raise SystemExit(not os.path.exists(os.path.join(sysconfig.get_paths()['include'], 'Python.h')))" 2>/dev/null \
    || missing+=(python3-dev)
fi
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  echo "Installing Debian packages NestScope needs: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
stamp=.venv/.nestscope-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ] || [ setup.py -nt "$stamp" ] || [ app/formats/_kernel.c -nt "$stamp" ]; then
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e ".[test]"
  touch "$stamp"
fi

cmd="${1:-run}"; shift || true
case "$cmd" in
  run)  exec .venv/bin/nestscope "$@" ;;
  test) export QT_QPA_PLATFORM=offscreen
        # in parallel over every core (pytest-xdist: a module per worker at a time, but the longest tests
        # spread and started first: tests/conftest.py) unless the caller
        # chooses: -n N / --numprocesses N / -p no:xdist among ARGS
        par=(-n auto --dist loadgroup)
        for a in "$@"; do
          case "$a" in -n|-n[0-9]*|--numprocesses|--numprocesses=*|no:xdist) par=() ;; esac
        done
        .venv/bin/python -m pytest -q "${par[@]}" "$@"
        # then the real window on a real X display (Xvfb, Qt platform xcb, not offscreen): screenshot checked
        # not blank, so a missing xcb library fails here; NESTSCOPE_SKIP_DISPLAY=1 skips it
        if [ -z "${NESTSCOPE_SKIP_DISPLAY:-}" ] && [ $# -eq 0 ]; then
          QT_QPA_PLATFORM=xcb xvfb-run -a -s "-screen 0 1440x900x24" .venv/bin/python packaging/display_check.py \
            --out build/display-check.png
        fi
        # then the desktop bundle: built from this checkout and run offscreen (info + snapshot);
        # NESTSCOPE_SKIP_BUNDLE=1 skips it (e.g. when running a subset of the tests)
        if [ -z "${NESTSCOPE_SKIP_BUNDLE:-}" ] && [ $# -eq 0 ]; then
          exec ./packaging/build.sh --smoke
        fi ;;
  *)    echo "usage: packaging/dev.sh run [FILE...] | test [PYTEST ARGS...]" >&2; exit 2 ;;
esac
