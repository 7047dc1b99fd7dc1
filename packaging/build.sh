#!/usr/bin/env bash
# Build the one-folder desktop bundle in dist/nestscope/ with PyInstaller (icons and the sample set inside).
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
start=$(date +%s)
"$py" -m PyInstaller --noconfirm --clean --log-level WARN --distpath dist --workpath build packaging/nestscope.spec
exe=dist/nestscope/nestscope
[ -x "$exe" ] || exe=dist/nestscope/nestscope.exe
size=$(du -sh dist/nestscope | cut -f1)
echo "bundle: dist/nestscope/ ($size, built in $(( $(date +%s) - start )) s); run $exe"

if [ "$smoke" = 1 ]; then
  out=$(mktemp -d)
  sample=resources/samples/after_z16_ZOSA_smf113.rdw.gz
  export QT_QPA_PLATFORM=offscreen NESTSCOPE_CACHE=0 NESTSCOPE_SETTINGS_FILE="$out/settings.ini"
  "$exe" info "$sample" > "$out/info.txt"
  grep -q "counter samples: [1-9]" "$out/info.txt" || { echo "smoke: info read no samples" >&2; cat "$out/info.txt" >&2; exit 1; }
  "$exe" snapshot "$sample" --out "$out/snapshot.png" --size 1024x700
  png=$(stat -c %s "$out/snapshot.png" 2>/dev/null || stat -f %z "$out/snapshot.png")
  [ "$png" -gt 20000 ] || { echo "smoke: snapshot PNG too small ($png bytes)" >&2; exit 1; }
  ver=$("$exe" --version)
  if ls app/formats/_kernel*.so app/formats/_kernel*.pyd >/dev/null 2>&1 && ! echo "$ver" | grep -q compiled; then
    echo "smoke: the compiled SMF reader kernel is built but the bundle does not use it: $ver" >&2; exit 1
  fi
  echo "smoke: $ver"
  guide=$(find dist/nestscope -path '*docs/user-guide.md' | head -1)
  [ -n "$guide" ] || { echo "smoke: the bundle lacks docs/user-guide.md (Help > User Guide)" >&2; exit 1; }
  echo "smoke: bundled info read $(grep -o 'counter samples: [0-9,]*' "$out/info.txt"); snapshot $out/snapshot.png ($png bytes)"
fi

if [ "$desktop" = 1 ]; then
  apps="${XDG_DATA_HOME:-$HOME/.local/share}/applications"
  icons="${XDG_DATA_HOME:-$HOME/.local/share}/icons/hicolor/256x256/apps"
  mkdir -p "$apps" "$icons"
  cp packaging/icons/nestscope-256.png "$icons/nestscope.png"
  sed "s|^Exec=.*|Exec=$(pwd)/dist/nestscope/nestscope %F|" packaging/nestscope.desktop > "$apps/nestscope.desktop"
  echo "installed $apps/nestscope.desktop (Exec: $(pwd)/dist/nestscope/nestscope)"
fi
