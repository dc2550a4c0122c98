"""Signing in: django-axes throttles wrong passwords on the dashboard's login and the admin's."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth import SESSION_KEY
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.test import Client

from ledger.management.commands.demo import DEMO_PASSWORD, DEMO_USER

PASSWORD = "pw-123456"
LIMIT = 5


@pytest.fixture
def lead(django_user_model: Any) -> Any:
    return django_user_model.objects.create_user(username="lead", password=PASSWORD, is_staff=True)


@pytest.fixture
def client() -> Client:
    return Client(REMOTE_ADDR="203.0.113.7")


def sign_in(client: Client, username: str, password: str, url: str = "/login/") -> Any:
    return client.post(url, {"username": username, "password": password})


def fail(client: Client, username: str, times: int, url: str = "/login/") -> None:
    for _ in range(times):
        sign_in(client, username, "wrong-password", url)


def test_the_right_password_signs_in(client, lead):
    response = sign_in(client, "lead", PASSWORD)
    assert response.status_code == 302
    assert client.session[SESSION_KEY] == str(lead.pk)


def test_after_five_wrong_passwords_the_right_one_is_refused_with_the_lockout_page(client, lead):
    for _ in range(LIMIT - 1):
        response = sign_in(client, "lead", "wrong-password")
        assert response.status_code == 200
        assert "did not match" in response.content.decode()
    fail(client, "lead", 1)

    response = sign_in(client, "lead", PASSWORD)

    assert response.status_code == 429
    html = response.content.decode()
    assert "Sign-in paused" in html
    assert "Try again in 15 minutes" in html
    assert SESSION_KEY not in client.session


def test_a_lockout_leaves_other_users_on_the_same_address_alone(client, lead, django_user_model):
    django_user_model.objects.create_user(username="viewer", password=PASSWORD)
    fail(client, "lead", LIMIT)

    response = sign_in(client, "viewer", PASSWORD)

    assert response.status_code == 302


def test_a_lockout_leaves_the_same_user_on_another_address_alone(client, lead):
    fail(client, "lead", LIMIT)

    response = sign_in(Client(REMOTE_ADDR="198.51.100.9"), "lead", PASSWORD)

    assert response.status_code == 302


def test_a_successful_sign_in_clears_the_count(client, lead):
    fail(client, "lead", LIMIT - 1)
    assert sign_in(client, "lead", PASSWORD).status_code == 302
    client.logout()
    fail(client, "lead", LIMIT - 1)

    assert sign_in(client, "lead", PASSWORD).status_code == 302


def test_the_admin_login_is_throttled_too(client, lead):
    fail(client, "lead", LIMIT, url="/admin/login/")

    response = sign_in(client, "lead", PASSWORD, url="/admin/login/")

    assert response.status_code == 429
    assert sign_in(client, "lead", PASSWORD).status_code == 429


def test_the_defaults_are_five_failures_then_fifteen_minutes_per_user_and_address(settings):
    assert settings.AXES_FAILURE_LIMIT == LIMIT
    assert settings.AXES_COOLOFF_TIME.total_seconds() == 15 * 60
    assert settings.AXES_LOCKOUT_PARAMETERS == [["username", "ip_address"]]


@pytest.mark.parametrize("password", ["short1", "password123", "12345678901"])
def test_weak_passwords_fail_the_validators(password, lead):
    with pytest.raises(ValidationError):
        validate_password(password, user=lead)


@pytest.mark.django_db
def test_the_demo_password_passes_the_validators(django_user_model):
    validate_password(DEMO_PASSWORD, user=django_user_model(username=DEMO_USER))
