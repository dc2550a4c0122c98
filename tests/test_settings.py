"""Production safety of `config/settings.py`, checked in fresh processes with a real environment."""

from __future__ import annotations

import os
import secrets
import subprocess
import sys

import pytest
from django.conf import settings

PRODUCTION = {
    "DJANGO_SECRET_KEY": secrets.token_urlsafe(50),
    "DJANGO_ALLOWED_HOSTS": "canon.example.com",
    "DJANGO_CSRF_TRUSTED_ORIGINS": "https://canon.example.com",
    "DJANGO_SECURE_COOKIES": "true",
    "DJANGO_SECURE_SSL_REDIRECT": "true",
    "DJANGO_SECURE_PROXY_SSL_HEADER": "HTTP_X_FORWARDED_PROTO",
    "DJANGO_SECURE_HSTS_SECONDS": "31536000",
    "DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS": "true",
    "DJANGO_SECURE_HSTS_PRELOAD": "true",
}


def run(args: list[str], **env: str) -> subprocess.CompletedProcess[str]:
    """A Python process on the real settings, with this machine's environment less every DJANGO_ variable."""
    clean = {name: value for name, value in os.environ.items() if not name.startswith("DJANGO_")}
    clean["DJANGO_SETTINGS_MODULE"] = "config.settings"
    return subprocess.run(
        [sys.executable, *args],
        env={**clean, **env},
        cwd=settings.BASE_DIR,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_check_deploy_is_clean_with_the_production_environment():
    result = run(["manage.py", "check", "--deploy", "--fail-level", "WARNING"], **PRODUCTION)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "System check identified no issues" in result.stdout


def test_check_deploy_warns_without_the_production_environment():
    result = run(
        ["manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        DJANGO_SECRET_KEY=PRODUCTION["DJANGO_SECRET_KEY"],
    )
    assert result.returncode != 0
    for warning in ("security.W004", "security.W008", "security.W012", "security.W016"):
        assert warning in result.stderr


@pytest.mark.parametrize("key", [None, "", "   ", "canon-insecure-development-key-change-me"])
def test_debug_off_without_a_secret_key_stops_start_up(key):
    env = {"DJANGO_DEBUG": "false"} | ({} if key is None else {"DJANGO_SECRET_KEY": key})
    result = run(["-c", "import config.settings"], **env)
    assert result.returncode != 0
    assert "ImproperlyConfigured: DJANGO_SECRET_KEY is missing" in result.stderr
    assert 'python -c "import secrets; print(secrets.token_urlsafe(50))"' in result.stderr


def test_debug_on_falls_back_to_the_development_key():
    result = run(["-c", "from config import settings; print(settings.SECRET_KEY)"], DJANGO_DEBUG="true")
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "canon-insecure-development-key-change-me"


def test_a_proxy_ssl_header_that_is_not_a_meta_name_stops_start_up():
    result = run(
        ["-c", "import config.settings"],
        DJANGO_SECRET_KEY=PRODUCTION["DJANGO_SECRET_KEY"],
        DJANGO_SECURE_PROXY_SSL_HEADER="X-Forwarded-Proto",
    )
    assert result.returncode != 0
    assert "DJANGO_SECURE_PROXY_SSL_HEADER must be a request.META name" in result.stderr
