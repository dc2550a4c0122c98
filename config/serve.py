"""The production server: `python -m config.serve --host H --port P --workers N [--pid FILE]`.

`make serve` runs this, and so do the tests and `bench/http.py`, so the server's flags live here once.
It checks the settings first (a missing DJANGO_SECRET_KEY stops it with the settings' message, not a
worker's traceback), then replaces itself with granian: the process keeps its pid, which is the main
process's, the one to signal (HUP: graceful restart of every worker; TERM or INT: graceful stop).
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from django.core.exceptions import ImproperlyConfigured

APPLICATION = "config.asgi:application"
# Granian (docs/configuration.md "Production server" has the figures that chose it): on HUP it replaces
# the workers one at a time, each old one finishing its requests; a worker that dies is started again;
# one that will not stop within KILL_TIMEOUT seconds is killed.
KILL_TIMEOUT = 30


def default_workers() -> int:
    """Two per core: a worker waits on the database for much of a request."""
    return 2 * (os.cpu_count() or 1)


def command(*, host: str, port: int, workers: int, pid_file: str = "") -> list[str]:
    """The server's command line: granian, one access-log line per request, logs on the console."""
    argv = [
        sys.executable,
        "-m",
        "granian",
        "--interface=asgi",
        f"--workers={workers}",
        f"--host={host}",
        f"--port={port}",
        "--respawn-failed-workers",
        f"--workers-kill-timeout={KILL_TIMEOUT}",
        "--access-log",
    ]
    if pid_file:
        argv.append(f"--pid-file={pid_file}")
    return [*argv, APPLICATION]


def check_settings() -> str | None:
    """The settings' own complaint when they cannot load (e.g. no DJANGO_SECRET_KEY), else None."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    try:
        importlib.import_module(os.environ["DJANGO_SETTINGS_MODULE"])
    except ImproperlyConfigured as exc:
        return str(exc)
    return None


def main(args: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m config.serve", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--workers", type=int, default=default_workers())
    parser.add_argument("--pid", default="", help="write the main process's pid to this file")
    parser.add_argument("--check", action="store_true", help="only check that the settings load")
    options = parser.parse_args(args)
    if options.workers < 1:
        parser.error("--workers must be 1 or more")
    # The workers keep their PostgreSQL connections in a pool between requests (docs/configuration.md
    # "Production server").
    os.environ.setdefault("DATABASE_POOL", "true")
    problem = check_settings()
    if problem:
        sys.exit(f"ImproperlyConfigured: {problem}")
    if options.check:
        return
    argv = command(host=options.host, port=options.port, workers=options.workers, pid_file=options.pid)
    print(" ".join(argv[1:]), flush=True)
    os.execv(argv[0], argv)


if __name__ == "__main__":
    main()
