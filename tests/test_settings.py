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


DATABASE_OPTIONS = (
    "from django.conf import settings; database = settings.DATABASES['default']; "
    "print(database.get('OPTIONS', {}), 'checked' if database.get('CONN_HEALTH_CHECKS') else 'unchecked')"
)
POSTGRES = {"DJANGO_DEBUG": "true", "DATABASE_URL": "postgres://canon@db.example.com:5432/canon"}


def test_postgresql_binds_parameters_on_the_server_and_pools_connections_when_asked():
    default = run(["-c", DATABASE_OPTIONS], **POSTGRES)
    pooled = run(["-c", DATABASE_OPTIONS], **POSTGRES, DATABASE_POOL="true")
    sized = run(["-c", DATABASE_OPTIONS], **POSTGRES, DATABASE_POOL="true", DATABASE_POOL_MAX_SIZE="6")

    assert default.returncode == 0, default.stderr
    assert "'server_side_binding': True" in default.stdout
    assert "pool" not in default.stdout  # a command opens one connection, and fails at once without it
    assert pooled.returncode == 0, pooled.stderr
    assert "'pool': {'min_size': 1, 'max_size': 2}" in pooled.stdout
    assert "unchecked" not in pooled.stdout  # each connection is checked as the pool hands it out
    assert sized.returncode == 0, sized.stderr
    assert "'min_size': 1, 'max_size': 6" in sized.stdout


def test_persistent_connections_without_the_pool_only():
    pooled = run(
        ["-c", "import config.settings"], **POSTGRES, DATABASE_CONN_MAX_AGE="60", DATABASE_POOL="true"
    )
    unpooled = run(["-c", DATABASE_OPTIONS], **POSTGRES, DATABASE_CONN_MAX_AGE="60")

    assert pooled.returncode != 0
    assert "set DATABASE_POOL=false to use it" in pooled.stderr
    assert unpooled.returncode == 0, unpooled.stderr


def test_prepared_statements_can_be_turned_off():
    result = run(["-c", DATABASE_OPTIONS], **POSTGRES, DATABASE_PREPARED_STATEMENTS="false")

    assert result.returncode == 0, result.stderr
    assert "server_side_binding" not in result.stdout


@pytest.mark.parametrize(
    ("name", "value", "message"),
    [
        ("DATABASE_POOL_MAX_SIZE", "0", "DATABASE_POOL_MAX_SIZE must be 1 or more, got 0"),
        ("DATABASE_POOL_MAX_SIZE", "many", "DATABASE_POOL_MAX_SIZE must be an integer, got 'many'"),
    ],
)
def test_a_bad_database_setting_stops_start_up_with_its_name(name, value, message):
    result = run(["-c", "import config.settings"], **POSTGRES, DATABASE_POOL="true", **{name: value})

    assert result.returncode != 0
    assert message in result.stderr


def test_sqlite_takes_none_of_the_postgresql_options():
    result = run(["-c", DATABASE_OPTIONS], DJANGO_DEBUG="true", DATABASE_URL="sqlite:///unused.sqlite3")

    assert result.returncode == 0, result.stderr
    assert "server_side_binding" not in result.stdout
    assert "pool" not in result.stdout
