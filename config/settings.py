"""Canon settings, read from the environment.

Every variable is listed in the README. Helpers fail loudly on values they cannot parse.
"""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent


def env_bool(name: str, default: bool) -> bool:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    lowered = value.strip().lower()
    if lowered in {"1", "true", "yes", "on"}:
        return True
    if lowered in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name} must be a boolean (true/false), got {value!r}")


def env_int(name: str, default: int) -> int:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    try:
        return int(value)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be an integer, got {value!r}") from exc


def env_list(name: str, default: list[str]) -> list[str]:
    value = os.environ.get(name)
    if value is None or value == "":
        return default
    return [item.strip() for item in value.split(",") if item.strip()]


DEBUG = env_bool("DJANGO_DEBUG", False)
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "")
if not SECRET_KEY:
    # Development fallback so `make run` works out of the box. Production sets DJANGO_SECRET_KEY.
    SECRET_KEY = "canon-insecure-development-key-change-me"

ALLOWED_HOSTS = env_list("DJANGO_ALLOWED_HOSTS", ["127.0.0.1", "localhost", "testserver"])
CSRF_TRUSTED_ORIGINS = env_list("DJANGO_CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "ninja",
    "django_htmx",
    "template_partials",
    "django_filters",
    "csp",
    "ledger",
    "review",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "csp.middleware.CSPMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "review.middleware.HtmxLoginRedirectMiddleware",
    "ledger.api.middleware.ApiJsonErrorMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

# Database: DATABASE_URL, defaulting to SQLite tuned for several concurrent writers
# (WAL journal, a busy timeout instead of "database is locked", IMMEDIATE transactions
# so a writer takes the lock when it begins rather than failing on upgrade).
DEFAULT_SQLITE_PATH = BASE_DIR / "var" / "canon.sqlite3"
DATABASE_URL = os.environ.get("DATABASE_URL", "")
if DATABASE_URL:
    _db = dj_database_url.parse(DATABASE_URL, conn_max_age=env_int("DATABASE_CONN_MAX_AGE", 0))
else:
    DEFAULT_SQLITE_PATH.parent.mkdir(parents=True, exist_ok=True)
    _db = {"ENGINE": "django.db.backends.sqlite3", "NAME": str(DEFAULT_SQLITE_PATH)}
if _db["ENGINE"] == "django.db.backends.sqlite3":
    _db.setdefault("OPTIONS", {}).update(
        {
            "transaction_mode": "IMMEDIATE",
            "timeout": 20,
            "init_command": (
                "PRAGMA journal_mode=WAL; PRAGMA busy_timeout=20000; "
                "PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;"
            ),
        }
    )
if os.environ.get("DATABASE_TEST_NAME"):
    _db.setdefault("TEST", {})["NAME"] = os.environ["DATABASE_TEST_NAME"]
elif _db["ENGINE"] == "django.db.backends.sqlite3":
    # Tests use a real file (WAL, busy timeout) rather than shared-cache memory, so threads and the
    # live server race the way production writers do. One file per process; the runner removes it.
    (BASE_DIR / "var").mkdir(exist_ok=True)
    _db.setdefault("TEST", {})["NAME"] = str(BASE_DIR / "var" / f"test-{os.getpid()}.sqlite3")
DATABASES = {"default": _db}
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "/static/"
# `collectstatic` fills STATIC_ROOT for production; WhiteNoise also serves straight from the app
# folders, so development and tests need no collect step.
STATIC_ROOT = Path(os.environ.get("DJANGO_STATIC_ROOT", BASE_DIR / "var" / "static"))
STATIC_ROOT.mkdir(parents=True, exist_ok=True)
WHITENOISE_USE_FINDERS = True
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "review:home"
LOGOUT_REDIRECT_URL = "login"

# Request bodies over 1 MiB are refused with 413 (API) or 400 (forms).
DATA_UPLOAD_MAX_MEMORY_SIZE = 1024 * 1024
CANON_MAX_BODY_BYTES = 1024 * 1024

SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True
SECURE_REFERRER_POLICY = "same-origin"

# Content-Security-Policy: no inline scripts, no third-party origins.
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["'self'", "data:"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    },
}

# Writes (POST/PATCH) one agent's tokens may make per project in a rolling minute; past it, 429 with
# Retry-After. Coordinator tokens are exempt; 0 turns the limit off. Counted in the cache below.
CANON_AGENT_WRITES_PER_MINUTE = env_int("CANON_AGENT_WRITES_PER_MINUTE", 120)
# Django's default cache, spelled out: local memory, so each process counts its own writes.
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "canon"}}

# Context compiler defaults (SPEC §4), overridable per call.
CANON_CONTEXT_MAX_ITEMS = env_int("CANON_CONTEXT_MAX_ITEMS", 20)
CANON_CONTEXT_MAX_TOKENS = env_int("CANON_CONTEXT_MAX_TOKENS", 4000)

# Best-effort mirror export after every ledger write that changes the files.
CANON_EXPORT_ON_WRITE = env_bool("CANON_EXPORT_ON_WRITE", True)
# Per-project lock files that keep exports of one project from interleaving, across processes.
CANON_LOCK_DIR = Path(os.environ.get("CANON_LOCK_DIR", BASE_DIR / "var" / "locks"))
# Canon's own data outside every workspace: copies of team files taken before Canon first replaces them.
CANON_DATA_DIR = Path(os.environ.get("CANON_DATA_DIR", BASE_DIR / "var"))

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "loggers": {
        "canon": {"handlers": ["console"], "level": os.environ.get("CANON_LOG_LEVEL", "INFO")},
    },
}
