"""The ``nestscope`` command line.

Exit codes shared by every command: 0 data was read (with or without
findings), 2 usage error, 3 nothing readable was found.  Never a traceback.
"""

from __future__ import annotations

import argparse
import atexit
import gc
import importlib
import os
import signal
import sys
import threading

EXIT_OK = 0
EXIT_USAGE = 2
EXIT_NOTHING = 3

COMMANDS = ["info", "report", "compare", "export", "sample", "snapshot", "cache", "extract", "query", "dataset", "unterse", "gui"]
GUI_OPTIONS = ("--no-sample", "--formulas")   # options of the window, given without the "gui" command


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # argparse exits 2 on usage errors, as we want
        self.print_usage(sys.stderr)
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\n")


class _Version(argparse._VersionAction):
    """``--version`` names the SMF reader's path too; the reader is imported only when it is asked for."""

    def __call__(self, parser, namespace, values, option_string=None):
        from app.formats import kernel

        self.version = f"{self.version} (SMF reader: {kernel.name()})"
        super().__call__(parser, namespace, values, option_string)


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser of every command (``command`` given: that command's own, the others registered by name only, so
    that one command's start imports and builds nothing for the others; usage lines and errors are the same)."""
    from app import __version__

    p = _Parser(prog="nestscope", description="IBM Z CPU MF analyzer for SMF 113 and z/VM MONWRITE data. "
                "With no command, opens the window: on the files given, else on the bundled sample set on a first "
                "start and on your last session once you have opened files of your own; --no-sample starts with an "
                "empty window, --formulas FILE loads a user formulas file (see `nestscope gui --help`).")
    p.add_argument("--version", action=_Version, version=f"nestscope {__version__}")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)
    for name in COMMANDS:
        if command is not None and name != command:
            sub.add_parser(name)
            continue
        mod = importlib.import_module(f"app.commands.{name}")
        mod.add_parser(sub)
    return p


def _escape_what_cannot_print() -> None:
    """Where the console or pipe cannot encode a character (Windows writes pipes in its ANSI code page, cp1252
    on most analysts' laptops, and a file name may be in any script) print an escape instead of failing."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="backslashreplace")
        except (AttributeError, ValueError, OSError):   # not a text stream of io (None in a windowed bundle)
            pass


def main(argv: list[str] | None = None) -> int:
    process = argv is None          # the process's own command line (``python -m app``, the ``nestscope`` script)
    _escape_what_cannot_print()
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0] not in COMMANDS and (not argv[0].startswith("-")
                                                 or argv[0].split("=")[0] in GUI_OPTIONS)):
        argv = ["gui", *argv]
    if process and argv[0] in QUICK_EXIT_COMMANDS and os.environ.get("NESTSCOPE_QUICK_EXIT", "1") != "0":
        atexit.register(_quick_exit)     # first registered: run after every exit function the command registers
    # the command's modules (pandas, the engine: 0.6-0.7 s before an export's first read) imported without the
    # cyclic garbage collector: its 200-odd passes over the growing heap of new modules, classes and functions
    # (alive until the process ends) cost 55 ms of that thread's CPU.  Then what was made is frozen (``gc.freeze``,
    # as the export does with the writers' modules, app.commands.export.few_collections), else the first pass
    # after would go over every object of the imports at once; the imports' garbage in cycles (some 740 objects,
    # a few hundred kB) stays with them until the process ends
    quiet = argv[0] in QUIET_IMPORT_COMMANDS and gc.isenabled()
    if quiet:
        gc.disable()
    try:
        _prefetch(argv)
        if process and argv[0] in QUICK_EXIT_COMMANDS:
            import app.formats      # (imported by the prefetch already)

            app.formats.GATHER_IN_PLACE = True       # a fresh process reading each file once (app.formats)
        parser = build_parser(argv[0] if argv[0] in COMMANDS else None)
        args = parser.parse_args(argv)
        mod = importlib.import_module(f"app.commands.{args.command}")
    finally:
        if quiet:
            gc.freeze()
            gc.enable()
    if args.command != "gui":
        _stop_on_signals()
    try:
        code = int(mod.run(args))
    except Terminated as exc:
        code = 128 + exc.signum
    except KeyboardInterrupt:
        code = 130
    except BrokenPipeError:
        code = EXIT_OK
    except Exception as exc:  # noqa: BLE001 - last line of defence: a message naming the files, never a traceback
        code = _unexpected(args, exc)
    _EXIT_CODE[:] = [code]
    return code


QUIET_IMPORT_COMMANDS = ("export", "compare")     # their modules imported without the garbage collector
# the commands whose process ends without the interpreter's teardown once their exit functions ran (:func:`_quick_exit`)
QUICK_EXIT_COMMANDS = ("export", "compare")
_EXIT_CODE: list[int] = []      # the code main returned (none: it raised, or it never returned)


def _quick_exit() -> None:
    """The last exit function of an ``export``/``compare`` process (registered before any other): once the command
    returned its code, its files are written and renamed, the other exit functions ran (the cache's writes are
    completed, the temporary files removed) and the threads that were not daemons ended, the process ends here
    with that code: stdout and stderr flushed, then ``os._exit``.  The interpreter's own teardown after this point
    (a last collection, every module and object freed one by one: the cold comparison deck's 400 MB of frames,
    arrays and python-pptx trees) took 40-110 ms of a deck's wall time and left nothing behind that the exit
    needs.  Nothing is skipped when main did not return a code, or when the streams cannot be flushed (a closed
    pipe: the ordinary exit reports it).  ``NESTSCOPE_QUICK_EXIT=0`` keeps the ordinary exit."""
    if not _EXIT_CODE:
        return
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except Exception:  # noqa: BLE001 - left to the interpreter's exit, which reports it as before
        return
    os._exit(_EXIT_CODE[0])


# the commands whose gzip inputs are inflated while their modules import (:data:`app.formats.prefetch.COMMANDS`)
PREFETCH_COMMANDS = ("export", "compare")


def _prefetch(argv: list[str]) -> None:
    """Start inflating the big gzip files an ``export``/``compare`` reads, on a second thread while this one
    imports the command's modules (:mod:`app.formats.prefetch`); nothing for the other commands, which do not
    even import it (``app.formats`` costs 60-80 ms, which the window's start would pay before its first paint)."""
    if argv[0] in PREFETCH_COMMANDS and os.environ.get("NESTSCOPE_PREFETCH", "1") != "0":
        from app.formats import prefetch

        prefetch.start(argv)


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP reached a command: raised like Ctrl+C, so every ``finally`` runs (an export's temporary
    file is removed, nothing half-written stays behind)."""

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum


def _stop_on_signals() -> None:
    """Turn SIGTERM and SIGHUP (where the platform has them: Windows has no SIGHUP) into :class:`Terminated`."""
    def stop(signum, _frame):
        raise Terminated(signum)

    if threading.current_thread() is not threading.main_thread():
        return
    for name in ("SIGTERM", "SIGHUP"):
        sig = getattr(signal, name, None)
        if sig is not None:
            try:
                signal.signal(sig, stop)
            except (OSError, ValueError):      # not settable here (embedded interpreter): the default stays
                pass


def _unexpected(args: argparse.Namespace, exc: BaseException) -> int:
    """Report an unexpected error of a command with the files it was working on; exit 3."""
    files = [str(f).encode("utf-8", "backslashreplace").decode("utf-8") for f in getattr(args, "files", []) or []]
    where = f" on {', '.join(files)}" if files else ""
    kind = "ran out of memory" if isinstance(exc, MemoryError) else f"failed ({type(exc).__name__}: {exc})"
    msg = (f"nestscope {args.command}: {kind}{where}; nothing more could be done with these files. "
           "Please report this with the files named here.")
    try:
        print(msg.encode("utf-8", "backslashreplace").decode("utf-8"), file=sys.stderr)
    except Exception:  # noqa: BLE001 - stderr itself unusable
        pass
    return EXIT_NOTHING
