#!/usr/bin/env bash
# Build the one-folder desktop bundle in dist/nestscope/ with PyInstaller (icons and the sample set inside),
# on Linux with the dev set-up; the build and smoke steps are packaging/build.py (which runs on every platform).
#   packaging/build.sh                  build
#   packaging/build.sh --smoke          build, then run the bundled executable offscreen: `info` on a sample
#                                       file and `snapshot` of the window to a PNG (fails if either fails)
#   packaging/build.sh --install-desktop   add a .desktop entry and the icon for the current user (Linux)
# Needs the dev set-up (packaging/dev.sh). With Debian's python3 it also needs binutils (objdump) for
# PyInstaller's dependency scan.
set -euo pipefail
cd "$(dirname "$0")/.."
smoke=0; desktop=0
for arg in "$@"; do
  case "$arg" in
    --smoke) smoke=1 ;;
    --install-desktop) desktop=1 ;;
    *) echo "usage: packaging/build.sh [--smoke] [--install-desktop]" >&2; exit 2 ;;
  esac
done
py=.venv/bin/python
[ -x "$py" ] || { echo "no .venv: run ./packaging/dev.sh test (or run) first" >&2; exit 2; }
if ! "$py" -c "import PyInstaller" 2>/dev/null; then
  "$py" -m pip install -q -e ".[package]"
fi
if [ "$(uname -s)" = Linux ] && ! command -v objdump >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get install -y -qq --no-install-recommends binutils
fi
# build (and smoke-run) with the cross-platform script the release workflow runs too
if [ "$smoke" = 1 ]; then "$py" packaging/build.py --smoke; else "$py" packaging/build.py; fi

if [ "$desktop" = 1 ]; then
  apps="${XDG_DATA_HOME:-$HOME/.local/share}/applications"
  icons="${XDG_DATA_HOME:-$HOME/.local/share}/icons/hicolor/256x256/apps"
  mkdir -p "$apps" "$icons"
  cp packaging/icons/nestscope-256.png "$icons/nestscope.png"
  sed "s|^Exec=.*|Exec=$(pwd)/dist/nestscope/nestscope %F|" packaging/nestscope.desktop > "$apps/nestscope.desktop"
  echo "installed $apps/nestscope.desktop (Exec: $(pwd)/dist/nestscope/nestscope)"
fi
