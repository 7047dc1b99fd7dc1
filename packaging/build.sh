#!/usr/bin/env bash
# Build a one-folder desktop bundle in dist/nestscope/ with PyInstaller.
# Needs the dev set-up (packaging/dev.sh) and, with Debian's python3, binutils and libpython3.11.
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/python -m pip install -q -e ".[package]"
.venv/bin/python -m PyInstaller --noconfirm --clean --distpath dist --workpath build packaging/nestscope.spec
echo "bundle: dist/nestscope/nestscope  (try: dist/nestscope/nestscope info resources/samples/*.gz)"
