"""Build the one-folder desktop bundle with PyInstaller and smoke-run it, on Linux, macOS and Windows alike.

    python packaging/build.py            build dist/nestscope/ (and dist/NestScope.app on macOS)
    python packaging/build.py --smoke    build, then run the bundled executable offscreen: ``--version``,
                                         ``info`` on a sample file and ``snapshot`` of the window to a PNG
    python packaging/build.py --smoke-only   smoke-run a bundle built before
    python packaging/build.py --archive  also pack the folder as dist/nestscope-<version>-<platform>.zip

Run it with the Python of the environment NestScope is installed in (``pip install -e ".[package]"``).
``packaging/build.sh`` (Linux, the dev set-up) and the release workflow (.github/workflows/release.yml) call it.
Exit status 0 when every step passed; otherwise the step that failed is named on stderr.
"""

from __future__ import annotations

import argparse
import importlib
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DIST = ROOT / "dist"
SAMPLE = ROOT / "resources" / "samples" / "after_z16_ZOSA_smf113.rdw.gz"
MIN_SNAPSHOT_BYTES = 20_000      # a 1024x700 window with its table drawn is ~100 kB; a blank one is ~5 kB
SMOKE_TIMEOUT_S = 600


class SmokeFailure(Exception):
    """One smoke step did not give what it should; the message says which and what it saw."""


def executable(dist: Path = DIST) -> Path:
    """The bundled executable (``nestscope.exe`` on Windows)."""
    return dist / "nestscope" / ("nestscope.exe" if sys.platform == "win32" else "nestscope")


def build(dist: Path = DIST) -> Path:
    """Run PyInstaller on packaging/nestscope.spec; returns the bundled executable."""
    try:
        import PyInstaller  # noqa: F401
    except ImportError:
        raise SystemExit('build: PyInstaller is not installed: pip install -e ".[package]"') from None
    start = time.monotonic()
    subprocess.run([sys.executable, "-m", "PyInstaller", "--noconfirm", "--clean", "--log-level", "WARN",
                    "--distpath", str(dist), "--workpath", str(ROOT / "build"),
                    str(ROOT / "packaging" / "nestscope.spec")], cwd=ROOT, check=True)
    exe = executable(dist)
    if not exe.is_file():
        raise SystemExit(f"build: PyInstaller ended but {exe} is missing")
    size = sum(f.stat().st_size for f in (dist / "nestscope").rglob("*") if f.is_file())
    print(f"bundle: {exe.parent} ({size / 2**20:.0f} MB, built in {time.monotonic() - start:.0f} s); run {exe}")
    return exe


def _run(exe: Path, args: list[str], env: dict[str, str]) -> str:
    proc = subprocess.run([str(exe), *args], env=env, capture_output=True, timeout=SMOKE_TIMEOUT_S)
    out = proc.stdout.decode("utf-8", "replace")
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace")
        raise SmokeFailure(f"`nestscope {' '.join(args)}` exited {proc.returncode}:\n{out}{err}")
    return out


def kernel_built() -> bool:
    """True when this checkout has the compiled SMF reader kernel (then the bundle must use it)."""
    folder = ROOT / "app" / "formats"
    return any(folder.glob("_kernel*.so")) or any(folder.glob("_kernel*.pyd"))


# compiled modules the program imports inside functions when installed: (module, its extension's file name
# pattern in the bundle, what falls back without it)
OPTIONAL_EXTENSIONS = [
    ("zlib_ng.zlib_ng", "zlib_ng.*", "zlib-ng: the clean gzip inflate (app/formats/clean_inflate.py) would fall back "
                                     "to stdlib zlib"),
    ("isal.isal_zlib", "isal_zlib*", "isal: the deck's deflate (app/export/pptx_zip.py) would fall back to zlib-ng"),
]


def installed(module: str) -> bool:
    """True when the building Python can import ``module`` (then the bundle must carry it)."""
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


def smoke(exe: Path) -> list[str]:
    """Run the bundle offscreen with its own settings and no cache; returns the lines to print."""
    work = Path(tempfile.mkdtemp(prefix="nestscope-smoke-"))
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", NESTSCOPE_CACHE="0",
               NESTSCOPE_SETTINGS_FILE=str(work / "settings.ini"))
    lines = []
    version = _run(exe, ["--version"], env).strip()
    if not version.startswith("nestscope "):
        raise SmokeFailure(f"--version printed {version!r}")
    if kernel_built() and "compiled" not in version:
        raise SmokeFailure(f"the compiled SMF reader kernel is built but the bundle does not use it: {version}")
    lines.append(f"smoke: {version}")
    info = _run(exe, ["info", str(SAMPLE)], env)
    m = re.search(r"counter samples: ([1-9][0-9,]*)", info)
    if not m:
        raise SmokeFailure(f"info read no counter samples:\n{info}")
    png = work / "snapshot.png"
    _run(exe, ["snapshot", str(SAMPLE), "--out", str(png), "--size", "1024x700"], env)
    size = png.stat().st_size if png.exists() else 0
    if size < MIN_SNAPSHOT_BYTES:
        raise SmokeFailure(f"snapshot PNG {png} is too small ({size} bytes): the window drew nothing")
    if not list(exe.parent.rglob("user-guide.md")):
        raise SmokeFailure("the bundle lacks docs/user-guide.md (Help > User Guide)")
    for module, pattern, loss in OPTIONAL_EXTENSIONS:
        if installed(module) and not [p for p in exe.parent.rglob(pattern) if p.suffix in (".so", ".pyd")]:
            raise SmokeFailure(f"{module} is installed but the bundle lacks its extension ({loss})")
    lines.append(f"smoke: bundled info read {m.group(1)} counter samples; snapshot {png} ({size} bytes)")
    return lines


def archive(exe: Path) -> Path:
    """Zip the bundle folder as dist/nestscope-<version>-<os>-<machine>.zip (the release asset)."""
    sys.path.insert(0, str(ROOT))
    from app import __version__

    name = f"nestscope-{__version__}-{platform_tag()}"
    out = shutil.make_archive(str(exe.parent.parent / name), "zip", root_dir=exe.parent.parent,
                              base_dir=exe.parent.name)
    print(f"archive: {out}")
    return Path(out)


def platform_tag() -> str:
    """``linux-x86_64``, ``macos-arm64``, ``windows-amd64``: the asset's name part for this machine."""
    osname = {"win32": "windows", "darwin": "macos"}.get(sys.platform, sys.platform.rstrip("0123456789"))
    return f"{osname}-{platform.machine().lower() or 'unknown'}"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="packaging/build.py", description="Build and smoke-run the desktop bundle.")
    p.add_argument("--smoke", action="store_true", help="run the built bundle offscreen (info, snapshot)")
    p.add_argument("--smoke-only", action="store_true", help="do not build; smoke-run dist/nestscope")
    p.add_argument("--archive", action="store_true", help="zip the bundle folder for a release")
    args = p.parse_args(argv)
    exe = executable() if args.smoke_only else build()
    if args.smoke or args.smoke_only:
        try:
            for line in smoke(exe):
                print(line)
        except (SmokeFailure, OSError, subprocess.TimeoutExpired) as exc:
            print(f"smoke: FAILED: {exc}", file=sys.stderr)
            return 1
    if args.archive:
        archive(exe)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
