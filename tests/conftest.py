"""Fixtures shared by the whole suite: projects, agents, tokens and an API client."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from django.core.cache import cache
from django.db import connection
from django.test import Client

from ledger import services, word_stats
from ledger.models import Project


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Tests about one database engine run in the suite on that engine and are deselected in the
    other, so that no test is ever reported as skipped: CI runs the suite on both. The third-party
    clients' tests (`one_engine`), whose answers the engine does not change, run in the SQLite suite."""
    other = {"sqlite": ["postgresql_only"], "postgresql": ["sqlite_only", "one_engine"]}.get(
        connection.vendor
    )
    if other is None:
        return
    deselected = [item for item in items if any(item.get_closest_marker(name) for name in other)]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = [item for item in items if item not in deselected]


@pytest.fixture(autouse=True)
def _test_settings(settings: Any) -> None:
    """Tests opt in to the mirror's export-after-write; passwords use a fast hasher; the cache is empty."""
    settings.CANON_EXPORT_ON_WRITE = False
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
    # Each test starts with no writes counted against any agent's rate, and with the compiler knowing
    # nothing of how common words are.
    cache.clear()
    word_stats.forget_word_stats()


@pytest.fixture
def project(db: None) -> Project:
    project, _ = services.project_create_or_update(slug="alpha", name="Alpha")
    return project


@pytest.fixture
def other_project(db: None) -> Project:
    project, _ = services.project_create_or_update(slug="beta", name="Beta")
    return project


@dataclass
class ApiClient:
    """A JSON client for the agent API that sends one bearer token."""

    client: Client
    token: str | None
    project: Project

    def url(self, path: str, project: str | None = None) -> str:
        return f"/api/projects/{project or self.project.slug}{path}"

    def _headers(self) -> dict[str, str]:
        return {"HTTP_AUTHORIZATION": f"Bearer {self.token}"} if self.token else {}

    def get(self, path: str, project: str | None = None, **params: Any) -> Any:
        return self.client.get(self.url(path, project), params, **self._headers())

    def send(
        self, method: str, path: str, body: Any = None, project: str | None = None, raw: str | None = None
    ) -> Any:
        data = raw if raw is not None else json.dumps(body if body is not None else {})
        return getattr(self.client, method)(
            self.url(path, project), data=data, content_type="application/json", **self._headers()
        )

    def post(self, path: str, body: Any = None, **kw: Any) -> Any:
        return self.send("post", path, body, **kw)

    def patch(self, path: str, body: Any = None, **kw: Any) -> Any:
        return self.send("patch", path, body, **kw)


@pytest.fixture
def make_api(db: None, project: Project) -> Callable[..., ApiClient]:
    """`make_api("agent", "Alice")` or `make_api("coordinator")`: a client holding a fresh token."""

    def make(role: str = "agent", agent: str | None = "alice", target: Project | None = None) -> ApiClient:
        target = target or project
        _, secret = services.token_issue(
            project=target, role=role, agent_name=agent if role == "agent" else None
        )
        return ApiClient(client=Client(), token=secret, project=project)

    return make


@pytest.fixture
def alice(make_api: Callable[..., ApiClient]) -> ApiClient:
    return make_api("agent", "Alice")


@pytest.fixture
def bob(make_api: Callable[..., ApiClient]) -> ApiClient:
    return make_api("agent", "Bob")


@pytest.fixture
def coordinator(make_api: Callable[..., ApiClient]) -> ApiClient:
    return make_api("coordinator")
