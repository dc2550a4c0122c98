"""Requests per second through the production server, beside the same work in-process.

    python bench/http.py                                  # SQLite, 2 workers, 1 and 8 clients
    python bench/http.py --engines sqlite,postgresql      # PostgreSQL: --database-url names the server
    python bench/http.py --workers 4 --clients 16 --count 2000
    python bench/http.py --server uvicorn                 # another server, to compare (see SERVERS)

For each engine it builds a throwaway database (bench/_setup.py), seeds a project whose agents each
have 200 memories beside 60 active decisions, then measures two kinds of request: an inbox submission
(POST .../decisions/inbox) and a context compile (GET .../context with a run_id, so the compilation is
recorded as agents do it). First in-process through django.test.Client, one client: Django's own cost.
Then through the server started by `python -m config.serve` (what `make serve` runs) on 127.0.0.1,
with one client and with --clients clients at once, each a thread holding one keep-alive connection
(http.client: cheap, so the client side does not starve the server on a small machine). Every request
must succeed; the table gives requests per second and the p50 / p95 latency seen by the client.
"""

from __future__ import annotations

# First: _setup takes bench/ off the import path, where this file would stand in for the standard `http`.
from _setup import ROOT, memory_row, parse_args, percentile, setup_django

# isort: split
import http.client
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

HOST = "127.0.0.1"
DEFAULT_POSTGRES = "postgres://postgres@127.0.0.1:5432/postgres"
APP = "config.asgi:application"


def server_command(server: str, port: int, workers: int) -> list[str]:
    """The production command (granian), or a server it was chosen against (docs/configuration.md
    "Production server")."""
    bind = f"{HOST}:{port}"
    gunicorn = [sys.executable, "-m", "gunicorn", APP, f"--workers={workers}", f"--bind={bind}"]
    if server == "production":
        return [
            sys.executable,
            "-m",
            "config.serve",
            f"--host={HOST}",
            f"--port={port}",
            f"--workers={workers}",
        ]
    if server == "gunicorn-asgi":  # gunicorn's own asyncio worker
        return [*gunicorn, "--worker-class=asgi"]
    if server == "gunicorn-uvicorn":
        return [*gunicorn, "--worker-class=uvicorn_worker.UvicornWorker"]
    if server == "uvicorn":
        return [
            *[sys.executable, "-m", "uvicorn", APP, f"--workers={workers}"],
            *[f"--host={HOST}", f"--port={port}", "--no-access-log"],
        ]
    raise SystemExit(f"unknown server {server!r}: {', '.join(SERVERS)}")


SERVERS = ("production", "gunicorn-uvicorn", "gunicorn-asgi", "uvicorn")


@dataclass
class Row:
    engine: str
    path: str
    work: str
    clients: int
    requests: int
    seconds: float
    p50_ms: float
    p95_ms: float
    errors: int

    def line(self) -> str:
        rate = self.requests / self.seconds
        return (
            f"| {self.engine} | {self.path} | {self.work} | {self.clients} | {rate:.0f} "
            f"| {self.p50_ms:.1f} | {self.p95_ms:.1f} | {self.errors} |"
        )


HEADER = (
    "| engine | path | work | clients | req/s | p50 ms | p95 ms | errors |\n|---|---|---|---|---|---|---|---|"
)


@dataclass
class Request:
    method: str
    path: str
    body: bytes | None


def submission(t: int, i: int, phase: str) -> Request:
    body = {"slug": f"{phase}-{t}-{i}", "type": "technical", "content": f"Proposal {i} " * 20}
    return Request("POST", "/api/projects/bench/decisions/inbox", json.dumps(body).encode())


def compile_request(t: int, i: int, phase: str) -> Request:
    return Request("GET", f"/api/projects/bench/context?agent=agent-{t}&run_id={phase}-{t}-{i}", None)


WORK: dict[str, Callable[[int, int, str], Request]] = {"submit": submission, "compile": compile_request}


def seed(clients: int) -> list[str]:
    """The bench project: one agent token per client, each agent with 200 memories, 60 active decisions."""
    from ledger import services
    from ledger.blocks import decision_block
    from ledger.models import AgentMemory, Decision
    from ledger.tokens import count_tokens

    project, _ = services.project_create_or_update(slug="bench", name="Bench")
    secrets = []
    agents = []
    rows = []
    for t in range(clients):
        token, secret = services.token_issue(project=project, role="agent", agent_name=f"agent-{t}")
        secrets.append(secret)
        agents.append(token.agent)
        for i in range(200):
            rows.append(
                memory_row(
                    project=project,
                    agent=token.agent,
                    type=("core_context", "learning", "pattern", "update")[i % 4],
                    importance=("high", "medium", "low")[i % 3],
                    content=f"memory {i} of agent {t}: retry the queue with a budget " * (1 + i % 5),
                    status="active",
                )
            )
    AgentMemory.objects.bulk_create(rows, batch_size=2000)
    decisions = []
    for i in range(60):
        d = Decision(
            project=project,
            agent=agents[i % clients],
            type=("architectural", "scope")[i % 2],
            title=f"Boundary {i}",
            content=f"Boundary {i}: keep the index on the queue " * 4,
        )
        d.tokens = count_tokens(decision_block(d))
        decisions.append(d)
    Decision.objects.bulk_create(decisions)
    return secrets


def in_process(engine: str, secret: str, work: str, count: int) -> Row:
    """`count` requests through django.test.Client in this process, one after another."""
    from django.test import Client

    client = Client()
    auth = f"Bearer {secret}"
    latencies: list[float] = []
    errors = 0
    for i in range(-10, count):  # ten to warm up, not counted
        request = WORK[work](0, i, f"in-process-{work}")
        started = time.perf_counter()
        if request.method == "POST":
            response = client.post(
                request.path, request.body, content_type="application/json", HTTP_AUTHORIZATION=auth
            )
        else:
            response = client.get(request.path, HTTP_AUTHORIZATION=auth)
        if i >= 0:
            latencies.append(time.perf_counter() - started)
            errors += response.status_code not in (200, 201)
    return row(engine, "in-process", work, 1, latencies, sum(latencies), errors)


def row(
    engine: str, path: str, work: str, clients: int, latencies: list[float], seconds: float, errors: int
) -> Row:
    return Row(
        engine=engine,
        path=path,
        work=work,
        clients=clients,
        requests=len(latencies),
        seconds=seconds,
        p50_ms=percentile(latencies, 50) * 1000 if latencies else float("nan"),
        p95_ms=percentile(latencies, 95) * 1000 if latencies else float("nan"),
        errors=errors,
    )


def over_http(
    engine: str, label: str, port: int, secrets: list[str], work: str, clients: int, count: int
) -> Row:
    """`count` requests over HTTP from `clients` threads at once, each on its own keep-alive connection."""
    per_client = count // clients
    latencies: list[list[float]] = [[] for _ in range(clients)]
    failures: list[str] = []
    phase = f"http-{work}-{clients}"

    def client(t: int, first: int, last: int, record: bool) -> None:
        connection = http.client.HTTPConnection(HOST, port, timeout=60)
        headers = {"Authorization": f"Bearer {secrets[t]}", "Content-Type": "application/json"}
        for i in range(first, last):
            request = WORK[work](t, i, phase)
            started = time.perf_counter()
            try:
                connection.request(request.method, request.path, request.body, headers)
                response = connection.getresponse()
                response.read()
                status = response.status
            except (OSError, http.client.HTTPException) as exc:
                failures.append(repr(exc))
                connection.close()
                continue
            if record:
                latencies[t].append(time.perf_counter() - started)
            if status not in (200, 201):
                failures.append(str(status))
        connection.close()

    def run(first: int, last: int, record: bool) -> float:
        threads = [threading.Thread(target=client, args=(t, first, last, record)) for t in range(clients)]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return time.perf_counter() - started

    run(-10, 0, record=False)  # every worker warmed up: imports, the tokenizer, first connections
    failures.clear()
    seconds = run(0, per_client, record=True)
    if failures:
        print(f"  {len(failures)} failed requests, e.g. {failures[:3]}", file=sys.stderr)
    return row(engine, label, work, clients, [x for per in latencies for x in per], seconds, len(failures))


def wait_until_up(process: subprocess.Popen[bytes], port: int, log: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit(f"the server stopped (exit {process.returncode}):\n{log.read_text()[-3000:]}")
        try:
            connection = http.client.HTTPConnection(HOST, port, timeout=2)
            connection.request("GET", "/login/")
            if connection.getresponse().status == 200:
                return
        except OSError:
            time.sleep(0.2)
    raise SystemExit(f"the server did not answer within a minute:\n{log.read_text()[-3000:]}")


def one_engine(engine: str, args: object) -> list[Row]:
    database_url = "" if engine == "sqlite" else (args.database_url or DEFAULT_POSTGRES)  # type: ignore[attr-defined]
    # One client writes far faster than an agent may (CANON_AGENT_WRITES_PER_MINUTE): measure without it.
    os.environ["CANON_AGENT_WRITES_PER_MINUTE"] = "0"
    engine = setup_django(database_url, "http")
    from django.db import connection

    clients: int = args.clients  # type: ignore[attr-defined]
    count: int = args.count  # type: ignore[attr-defined]
    secrets = seed(clients)
    rows = [in_process(engine, secrets[0], work, count) for work in WORK]
    connection.close()

    port: int = args.port  # type: ignore[attr-defined]
    with tempfile.NamedTemporaryFile(prefix="canon-bench-http-", suffix=".log", delete=False) as log_file:
        log = Path(log_file.name)
        server = subprocess.Popen(
            server_command(args.server, port, args.workers),  # type: ignore[attr-defined]
            cwd=ROOT,
            env=os.environ,
            stdout=log_file,
            stderr=subprocess.STDOUT,
        )
    try:
        wait_until_up(server, port, log)
        name = "granian" if args.server == "production" else args.server  # type: ignore[attr-defined]
        label = f"{name} x{args.workers}"  # type: ignore[attr-defined]
        for work in WORK:
            for n in sorted({1, clients}):
                rows.append(over_http(engine, label, port, secrets, work, n, count))
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=40)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
        log.unlink()
    return rows


def main() -> None:
    args = parse_args(
        __doc__.splitlines()[0],
        [
            ("--engines", {"default": "", "help": "sqlite,postgresql (default: --database-url's engine)"}),
            ("--server", {"default": "production", "choices": SERVERS}),
            ("--workers", {"type": int, "default": 2}),
            ("--clients", {"type": int, "default": 8}),
            ("--count", {"type": int, "default": 1000, "help": "requests per measurement"}),
            ("--port", {"type": int, "default": 8250}),
            ("--engine", {"default": "", "help": "internal: measure one engine in this process"}),
        ],
    )
    if args.engine:
        print(json.dumps([asdict(r) for r in one_engine(args.engine, args)]))
        return
    engines = args.engines or ("postgresql" if args.database_url.startswith("postgres") else "sqlite")
    # One process per engine: Django is set up once per process, on one database.
    own = [
        f"--database-url={args.database_url}",
        f"--server={args.server}",
        f"--workers={args.workers}",
        f"--clients={args.clients}",
        f"--count={args.count}",
        f"--port={args.port}",
    ]
    print(HEADER, flush=True)
    for engine in engines.split(","):
        result = subprocess.run(
            [sys.executable, __file__, *own, f"--engine={engine.strip()}"], stdout=subprocess.PIPE, text=True
        )
        if result.returncode:
            raise SystemExit(result.returncode)
        for fields in json.loads(result.stdout.strip().splitlines()[-1]):
            print(Row(**fields).line(), flush=True)


if __name__ == "__main__":
    main()
