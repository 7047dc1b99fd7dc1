"""Spark kept quiet (issue 24): its JVM's start-up notes and logs go to a file, not into a command's output.

``query --engine spark`` prints its table and nothing of Spark's: the JVM is started with a log4j2 configuration
of errors only, and with its standard error pointed at ``<tmp>/nestscope-spark-<pid>.log`` (what the JVM writes
before its logging starts, such as Java's incubator-module note); the message of a failed start names that file.
A log that holds nothing but those start-up notes is removed when the process ends (:func:`remove_when_quiet`):
a query a day leaves no file a day; one with an error line is kept.
"""

from __future__ import annotations

import contextlib
import os

__all__ = ["quiet_log4j", "remove_when_quiet", "spark_log_path", "stderr_to"]


_LOG4J = """# NestScope: Spark's JVM logs errors only (no start-up warnings in the output)
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = spark: %p %c{1}: %m%n
"""


def spark_log_path() -> str:
    import tempfile

    return os.path.join(tempfile.gettempdir(), f"nestscope-spark-{os.getpid()}.log")


@contextlib.contextmanager
def stderr_to(path: str):
    """File descriptor 2 points at ``path`` inside the block (a child process started there keeps it)."""
    import sys

    try:
        sys.stderr.flush()
    except (OSError, ValueError):
        pass
    saved = os.dup(2)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    try:
        os.dup2(fd, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(fd)


def quiet_log4j() -> str:
    """A log4j2 configuration file (in the temporary directory) that keeps Spark's JVM to errors."""
    import tempfile

    path = os.path.join(tempfile.gettempdir(), f"nestscope-spark-log4j2-{os.getuid() if hasattr(os, 'getuid') else 0}"
                        ".properties")
    try:
        with open(path, encoding="utf-8") as fh:
            if fh.read() == _LOG4J:
                return path
    except OSError:
        pass
    tmp = f"{path}.{os.getpid()}"
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write(_LOG4J)
    os.replace(tmp, path)
    return path


def remove_when_quiet(path: str) -> None:
    """At the process's end, remove the JVM's log ``path`` unless Spark logged an error in it (a line of the
    configured layout, ``spark: ERROR ...``, or a Java exception's trace): start-up notes alone are not kept."""
    import atexit

    def tidy() -> None:
        try:
            with open(path, encoding="utf-8", errors="replace") as fh:
                text = fh.read()
            if "spark: ERROR" not in text and "spark: FATAL" not in text and "Exception" not in text:
                os.unlink(path)
        except OSError:     # gone already, or still held open where that forbids removal (Windows)
            pass
    atexit.register(tidy)
