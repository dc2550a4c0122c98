"""Canon served over real HTTP on the test database.

`production_server()`: `python -m config.serve`, the command `make serve` runs, in a subprocess. It runs
the real settings (`config.settings`, DEBUG off) with this suite's secret key, so a session made in the
test process signs the browser in, and with the test database's URL (tests/processes.py).

`asgi_in_thread()`: the same ASGI application (`config.asgi`) under uvicorn in a thread of the test
process, with the suite's settings: quicker to start, for tests of what the application answers.
"""

from __future__ import annotations

import http.client
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import uvicorn
from asgiref.sync import sync_to_async
from django.conf import settings
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.db import connections

from config.asgi import build_application
from tests.processes import database_url
from tests.threads import run_async

HOST = "127.0.0.1"
# Each xdist worker takes its own ten ports of 8100-8199, and the first of them that is free.
PORTS_PER_WORKER = 10
FIRST_PORT = 8100


def password_hash(raw: str) -> str:
    """A password hash the server accepts: the suite hashes with MD5 for speed, which the real settings do
    not know. PBKDF2 with few iterations instead; the server upgrades it at the first sign-in."""
    hasher = PBKDF2PasswordHasher()
    return hasher.encode(raw, hasher.salt(), iterations=1000)


@dataclass
class Server:
    """A running production server: its base URL, its main process (the pid to signal) and its log."""

    url: str
    process: subprocess.Popen[bytes]
    log_path: Path

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def worker_pids(self) -> set[int]:
        """The main process's child processes: its workers."""
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children").read_text()
        return {int(pid) for pid in children.split()}


def free_port(base: int = FIRST_PORT) -> int:
    """A free port of this xdist worker's ten, counted from `base`."""
    worker = os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw")
    first = base + PORTS_PER_WORKER * (int(worker) % 10 if worker.isdigit() else 0)
    for port in range(first, first + PORTS_PER_WORKER):
        with socket.socket() as probe:
            try:
                probe.bind((HOST, port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {first}-{first + PORTS_PER_WORKER - 1}")


def environment(**extra: str) -> dict[str, str]:
    """The real settings on the test database, with this suite's key; exports after writes off."""
    return {
        **{name: value for name, value in os.environ.items() if not name.startswith("DJANGO_")},
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DJANGO_SECRET_KEY": settings.SECRET_KEY,
        "DATABASE_URL": database_url(),
        "CANON_EXPORT_ON_WRITE": "false",
        **extra,
    }


def serve_command(port: int, workers: int) -> list[str]:
    """What `make serve` runs, with this test's port and worker count."""
    return [sys.executable, "-m", "config.serve", f"--host={HOST}", f"--port={port}", f"--workers={workers}"]


def wait_until_answering(server: Server, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"the server stopped (exit {server.process.returncode}):\n{server.log()}")
        connection = http.client.HTTPConnection(HOST, int(server.url.rsplit(":", 1)[1]), timeout=5)
        try:
            connection.request("GET", "/login/")
            if connection.getresponse().status == 200:
                return
        except OSError:
            time.sleep(0.1)
        finally:
            connection.close()
    raise RuntimeError(f"the server did not answer within {timeout} s:\n{server.log()}")


def stop(process: subprocess.Popen[bytes]) -> None:
    """TERM, the graceful stop; KILL if it has not stopped after the graceful timeout."""
    if process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=35)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@contextmanager
def production_server(*, workers: int = 2, **extra: str) -> Iterator[Server]:
    """Start the production server on the current test database, wait until it answers, yield it, stop it.
    `extra` adds environment variables (settings) for the server."""
    port = free_port()
    # Its own data directory (the write counts' cache, backups): not the one of a server beside it.
    data_dir = tempfile.mkdtemp(prefix="canon-serve-data-")
    with tempfile.NamedTemporaryFile(prefix="canon-serve-", suffix=".log", delete=False) as log:
        process = subprocess.Popen(
            serve_command(port, workers),
            cwd=settings.BASE_DIR,
            env=environment(CANON_DATA_DIR=data_dir, **extra),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    server = Server(url=f"http://{HOST}:{port}", process=process, log_path=Path(log.name))
    try:
        wait_until_answering(server)
        yield server
    finally:
        stop(process)
        server.log_path.unlink(missing_ok=True)
        shutil.rmtree(data_dir, ignore_errors=True)


# The in-thread servers take their ports from 8300-8399, away from the production servers' range.
IN_THREAD_FIRST_PORT = 8300


@contextmanager
def asgi_in_thread() -> Iterator[str]:
    """A freshly built `config.asgi` application (its MCP session manager runs once) under uvicorn in a
    daemon thread; yields the base URL. Tests using it need `transactional_db`: the server's threads
    read committed rows only."""
    application = build_application()
    for _attempt in range(5):
        port = free_port(IN_THREAD_FIRST_PORT)
        config = uvicorn.Config(application, host=HOST, port=port, lifespan="on", log_level="warning")
        server = uvicorn.Server(config)
        thread = threading.Thread(target=server.run, name=f"uvicorn-{port}", daemon=True)
        thread.start()
        deadline = time.monotonic() + 30
        while not server.started and thread.is_alive() and time.monotonic() < deadline:
            time.sleep(0.05)
        if server.started:
            break
        server.should_exit = True
        thread.join(timeout=10)
    else:
        raise RuntimeError("uvicorn did not start")
    try:
        yield f"http://{HOST}:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        # The bearer check ran in asgiref's shared thread: close its connection, or PostgreSQL keeps the
        # test database busy when the suite drops it.
        run_async(sync_to_async(connections.close_all))
