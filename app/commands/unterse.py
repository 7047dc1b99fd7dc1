"""``nestscope unterse FILE --out OUT``: write the untersed data set, for an analyst who wants the dump itself.

The output is what z/OS FTP in binary mode with ``SITE RDW`` gives for the data set: fixed records back to back,
variable records each behind its RDW (an SMF dump comes out as an RDW file every SMF tool reads).  A gzip of a
tersed file is taken too.  The output is written to a temporary file beside OUT and renamed at the end (never
over the input); it streams a chunk at a time, so a dump larger than memory is fine.  The expansion ratio check
of the readers (NESTSCOPE_MAX_RATIO) stops a decompression bomb; there is no size cap.

Exit codes: 0 the data set was untersed (damage is reported, and what came before it is written), 3 the file
is not a tersed data set, cannot be read or nothing could be untersed, 2 usage errors.
"""

from __future__ import annotations

import argparse
import mmap
import os
import sys

from app.textsafe import display_text

EXIT_OK, EXIT_NOTHING = 0, 3


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    """Register the ``unterse`` subcommand."""
    p = sub.add_parser("unterse", help="write the untersed data set of a tersed (AMATERSE) file",
                       description="Unterse an AMATERSE (PACK or SPACK) file as z/OS FTP binary with SITE RDW "
                                   "gives the data set: fixed records back to back, variable records each with "
                                   "its RDW.  The input may be gzip compressed.")
    p.add_argument("file", metavar="FILE", help="tersed file (downloaded in binary mode; gzip allowed)")
    p.add_argument("--out", required=True, metavar="OUT", help="file to write (replaced atomically)")
    return p


class _Stopped(Exception):
    """The ratio check stopped the unterse: nothing is written."""


def _say(text: str) -> str:
    """A message as printable text: names from the data and undecodable path bytes escaped (app.textsafe)."""
    return display_text(text.encode("utf-8", "backslashreplace").decode("utf-8"))


def run(args: argparse.Namespace) -> int:
    from app.export import ExportError, atomic_output
    from app.formats import _display, gunzip, max_bytes, max_ratio, terse

    file = _display(args.file)
    try:
        with open(args.file, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            raw = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
    except (OSError, ValueError) as exc:
        print(_say(f"{file}: cannot be read ({getattr(exc, 'strerror', None) or exc})"), file=sys.stderr)
        return EXIT_NOTHING
    findings = []
    if raw[:2] == b"\x1f\x8b":
        raw, findings, stop = gunzip(raw, file, cap=max_bytes())
        if stop:
            print(_say(f"{file}: {stop}"), file=sys.stderr)
            return EXIT_NOTHING
    if not terse.looks_tersed(raw):
        print(_say(f"{file}: is not a tersed data set (it does not start with an AMATERSE PACK or SPACK "
                   "header); nothing was written"), file=sys.stderr)
        return EXIT_NOTHING
    try:
        with atomic_output(args.out, [args.file], suffix=".part") as tmp, open(tmp, "wb") as out:
            _, info = terse.unterse(raw, file, write=out.write, ratio=max_ratio(), floor=terse.RATIO_FLOOR)
            if info.stop:
                raise _Stopped(info.stop)
    except _Stopped as exc:
        print(_say(f"{file}: {exc}; nothing was written"), file=sys.stderr)
        return EXIT_NOTHING
    except ExportError as exc:
        print(_say(str(exc)), file=sys.stderr)
        return EXIT_NOTHING
    except OSError as exc:
        print(_say(f"{args.out}: cannot be written ({exc.strerror or exc})"), file=sys.stderr)
        return EXIT_NOTHING
    for f in [*findings, *info.findings]:
        print(_say(f"{f.severity}: {f.message}"), file=sys.stderr)
    print(_say(f"{file}: {info.describe()} -> {_display(args.out)}"))
    return EXIT_OK if info.size else EXIT_NOTHING
