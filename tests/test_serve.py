"""The production server (`make serve`: `python -m config.serve`, granian with several workers) in a
process of its own on the test database: the dashboard, static files, the API, `/mcp/`, a graceful
restart under load, and a clear refusal without a secret key."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Iterator

import httpx2
import pytest
from django.conf import settings
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from ledger import services
from ledger.models import InboxEntry, Membership, Project
from tests import servers
from tests.threads import run_async

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(scope="module")
def server(django_db_setup: None) -> Iterator[servers.Server]:
    with servers.production_server() as running:
        yield running


def token(project: Project, role: str = "agent", agent: str | None = "Alice") -> str:
    return services.token_issue(project=project, role=role, agent_name=agent if role == "agent" else None)[1]


def bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


def test_answers_the_dashboard_login_page(server):
    response = httpx2.get(f"{server.url}/login/")

    assert response.status_code == 200
    assert "Sign in" in response.text
    assert "Content-Security-Policy" in response.headers


def test_the_dashboard_asks_for_a_login_and_shows_no_debug_page(server):
    assert httpx2.get(f"{server.url}/").status_code == 302
    missing = httpx2.get(f"{server.url}/no-such-page/")
    assert missing.status_code == 404
    assert "URLconf" not in missing.text  # DEBUG is off: no technical 404 page


def test_a_member_signs_in_through_the_login_form_and_sees_the_project(server, project, django_user_model):
    user = django_user_model.objects.create(username="lead", password=servers.password_hash("pw-123456"))
    Membership.objects.create(user=user, project=project, role="coordinator")

    with httpx2.Client(base_url=server.url) as browser:
        form = browser.get("/login/")
        csrf = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text)
        assert csrf
        signed_in = browser.post(
            "/login/",
            data={"username": "lead", "password": "pw-123456", "csrfmiddlewaretoken": csrf[1]},
            headers={"Referer": f"{server.url}/login/"},
        )
        home = browser.get("/")

    assert signed_in.status_code == 302
    assert home.status_code == 200
    assert "Alpha" in home.text


def test_serves_static_files_through_whitenoise_with_caching_headers(server):
    response = httpx2.get(f"{server.url}/static/css/canon.css")

    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/css")
    assert response.headers["cache-control"] == "max-age=60, public"
    assert "last-modified" in response.headers
    again = httpx2.get(
        f"{server.url}/static/css/canon.css", headers={"If-Modified-Since": response.headers["last-modified"]}
    )
    assert again.status_code == 304


def test_serves_the_api_to_a_token_and_refuses_it_another_project(server, project, other_project):
    services.entry_submit(
        project=project, agent_name="Alice", slug="use-postgres", type="technical", content="x"
    )
    secret = token(project)

    mine = httpx2.get(f"{server.url}/api/projects/alpha/decisions/inbox", headers=bearer(secret))
    theirs = httpx2.get(f"{server.url}/api/projects/beta/decisions/inbox", headers=bearer(secret))
    anonymous = httpx2.get(f"{server.url}/api/projects/alpha/decisions/inbox")

    assert mine.status_code == 200
    assert [entry["slug"] for entry in mine.json()] == ["use-postgres"]
    assert theirs.status_code in (403, 404)
    assert anonymous.status_code == 401


def test_api_writes_reach_the_database(server, project):
    response = httpx2.post(
        f"{server.url}/api/projects/alpha/decisions/inbox",
        json={"slug": "served", "type": "technical", "content": "Through the production server"},
        headers=bearer(token(project)),
    )

    assert response.status_code == 201, response.text
    assert InboxEntry.objects.get(project=project).slug == "served"


def test_mcp_without_a_token_is_401(server, project):
    response = httpx2.post(
        f"{server.url}/mcp/",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Accept": "application/json, text/event-stream"},
    )

    assert response.status_code == 401
    assert "bearer token" in response.json()["error"]


def test_mcp_with_a_token_lists_tools_through_the_sdk_client(server, project):
    secret = token(project)

    async def tools() -> set[str]:
        http = httpx2.AsyncClient(headers=bearer(secret))
        async with Client(streamable_http_client(f"{server.url}/mcp/", http_client=http)) as client:
            return {tool.name for tool in (await client.list_tools()).tools}

    assert "list_decisions" in run_async(tools)


def test_graceful_restart_under_load_loses_no_request(project):
    """Clients submit without pause while the main process is sent HUP: every worker is replaced and every
    submission is answered 201, its entry stored once.

    A request written on a keep-alive connection at the instant the old worker closes that idle
    connection is dropped unread ("disconnected without sending a response"): HTTP/1.1 lets a server
    close an idle connection, and a client then sends the request again (RFC 9112, 9.3.1). The client
    here does so once. That the retry is answered 201, not 200 (the answer to a repeated submission),
    shows the dropped request never reached the ledger; such retries stay rare.

    On a busy machine the new workers may also take a moment to accept: a connection refused then
    carries no request at all, and the client connects again. Refusals happen only while the workers
    are being replaced, never before the signal nor a second after the new workers accept."""
    clients = 4
    secrets = [token(project, agent=f"agent-{n}") for n in range(clients)]
    answers: list[int | str] = []
    retries: list[str] = []
    refused: list[float] = []
    stop = threading.Event()

    def submit(n: int) -> None:
        with httpx2.Client(
            base_url=f"{restarting.url}/api/projects/alpha", headers=bearer(secrets[n])
        ) as http:
            i = 0
            while not stop.is_set():
                entry = {"slug": f"load-{n}-{i}", "type": "technical", "content": "x"}
                try:
                    try:
                        response = post_connected(http, entry)
                    except httpx2.RemoteProtocolError as exc:  # closed idle, the request unread
                        retries.append(repr(exc))
                        response = post_connected(http, entry)
                    answers.append(response.status_code)
                except httpx2.HTTPError as exc:
                    answers.append(repr(exc))
                i += 1

    def post_connected(http: httpx2.Client, entry: dict[str, str]) -> httpx2.Response:
        """Post, connecting again while the connection is refused (nothing was sent), for up to 10 s."""
        give_up = time.monotonic() + 10
        while True:
            try:
                return http.post("/decisions/inbox", json=entry)
            except httpx2.ConnectError:
                refused.append(time.monotonic())
                if time.monotonic() > give_up:
                    raise
                time.sleep(0.01)

    with servers.production_server(workers=2, CANON_AGENT_WRITES_PER_MINUTE="0") as restarting:
        before = restarting.worker_pids()
        threads = [threading.Thread(target=submit, args=(n,)) for n in range(clients)]
        for thread in threads:
            thread.start()
        time.sleep(1)
        signalled = time.monotonic()
        os.kill(restarting.process.pid, signal.SIGHUP)
        deadline = signalled + 60
        while time.monotonic() < deadline:
            now = restarting.worker_pids()
            if len(now) == 2 and not now & before:
                break
            time.sleep(0.2)
        # Up means accepting: a new worker's process exists some time before it listens (longer on a busy
        # machine), and the old ones are gone, so a connection accepted now is a new worker's.
        while time.monotonic() < deadline:
            try:
                httpx2.get(f"{restarting.url}/login/", timeout=5)
                break
            except httpx2.ConnectError:
                time.sleep(0.01)
        replaced = time.monotonic()
        time.sleep(1)  # the new workers serve for a while too
        stop.set()
        for thread in threads:
            thread.join()
        after = restarting.worker_pids()
        log = restarting.log()

    assert before and after and not after & before, f"the workers were not replaced:\n{log}"
    assert "HUP signal received" in log
    failures = [answer for answer in answers if answer != 201]
    assert not failures, f"{len(failures)} of {len(answers)} requests failed: {failures[:5]}"
    assert len(answers) > 50
    assert len(retries) <= clients, retries  # at most one closed connection per client and worker change
    late = [moment - replaced for moment in refused if not signalled <= moment < replaced + 1]
    assert not late, f"connections refused outside the restart, seconds after it: {late[:5]}"
    assert InboxEntry.objects.filter(project=project).count() == len(answers)


def test_a_missing_secret_key_stops_the_server_with_the_settings_message():
    env = {name: value for name, value in os.environ.items() if not name.startswith("DJANGO_")}
    result = subprocess.run(
        servers.serve_command(servers.free_port(), 1),
        cwd=settings.BASE_DIR,
        env={**env, "DJANGO_SETTINGS_MODULE": "config.settings"},
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.returncode == 1
    assert "DJANGO_SECRET_KEY is missing" in result.stderr
    assert "Traceback" not in result.stderr
    assert result.stdout == ""  # it stopped before starting granian


def test_make_serve_checks_the_settings_then_migrates_collects_and_serves_through_config_serve():
    """`make serve` runs the same entry point as these tests, with its knobs, after the check."""
    result = subprocess.run(
        ["make", "-n", "serve", "HOST=0.0.0.0", "PORT=8123", "WORKERS=3", "PIDFILE=/tmp/canon.pid"],
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        timeout=60,
    )

    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    steps = ["-m config.serve --check", "manage.py migrate", "manage.py collectstatic --noinput", "db_worker"]
    positions = [next(i for i, line in enumerate(lines) if step in line) for step in steps]
    assert positions == sorted(positions)
    assert "-m config.serve --host 0.0.0.0 --port 8123 --workers 3 --pid /tmp/canon.pid" in result.stdout


def test_the_agent_write_limit_holds_across_the_workers(project):
    """Every worker counts an agent's writes in the same cache: with a limit of 3 a minute, 3 of 10 writes
    pass however the connections are spread over the 2 workers (one count per process would let up to 6)."""
    secret = token(project)
    with servers.production_server(CANON_AGENT_WRITES_PER_MINUTE="3") as running:
        answers = []
        for n in range(10):
            # A connection per request, so the kernel spreads them over the workers.
            with httpx2.Client(headers=bearer(secret)) as client:
                response = client.post(
                    f"{running.url}/api/projects/alpha/decisions/inbox",
                    json={"slug": f"limited-{n}", "type": "technical", "content": "One of ten"},
                )
            answers.append(response.status_code)

    assert answers == [201] * 3 + [429] * 7
    assert InboxEntry.objects.filter(project=project).count() == 3
