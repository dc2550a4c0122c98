"""Requests Django refuses before any view runs get the answer their caller can read."""

from __future__ import annotations

import pytest


@pytest.mark.django_db
def test_an_api_request_with_an_unreadable_host_gets_the_apis_json_error(client):
    response = client.get("/api/projects/alpha/decisions", HTTP_HOST="?m:")
    assert response.status_code == 400
    assert response["Content-Type"] == "application/json"
    body = response.json()
    assert "Host header" in body["error"] and body["details"][0]["field"] == "headers"


@pytest.mark.django_db
def test_a_page_request_with_an_unreadable_host_gets_djangos_page(client):
    response = client.get("/login/", HTTP_HOST="?m:")
    assert response.status_code == 400
    assert response["Content-Type"].startswith("text/html")
