"""Fixtures of the MCP client tests: the installed clients.

The tests never skip: without the clients installed (`make mcp-clients`) every one of them fails and says so.
"""

from __future__ import annotations

import pytest

from tests.mcp_clients import clients


@pytest.fixture(scope="session")
def mcp_clients() -> None:
    """Fails every test that needs the clients when the pinned ones are not installed."""
    reason = clients.missing()
    if reason:
        pytest.fail(reason, pytrace=False)


@pytest.fixture(autouse=True)
def _clients_installed(mcp_clients: None) -> None:
    """Every test here runs the real clients."""
