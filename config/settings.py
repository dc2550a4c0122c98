"""Canon settings, read from the environment.

Every variable is listed in docs/configuration.md. Helpers fail loudly on values they cannot parse.
"""

from __future__ import annotations

import os
import re
from datetime import timedelta
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
# `make run` sets DJANGO_DEBUG=true and uses the development key; anything else must bring its own key,
# so a server started without one stops here instead of signing sessions with a published secret.
DEVELOPMENT_SECRET_KEY = "canon-insecure-development-key-change-me"
SECRET_KEY = os.environ.get("DJANGO_SECRET_KEY", "").strip()
if SECRET_KEY in {"", DEVELOPMENT_SECRET_KEY}:
    if not DEBUG:
        raise ImproperlyConfigured(
            "DJANGO_SECRET_KEY is missing (or is the development key) and DJANGO_DEBUG is off. "
            "Generate a key with\n"
            '    python -c "import secrets; print(secrets.token_urlsafe(50))"\n'
            "and set DJANGO_SECRET_KEY to it (or set DJANGO_DEBUG=true on a development machine)."
        )
    SECRET_KEY = DEVELOPMENT_SECRET_KEY

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
    "ninja",
    "django_htmx",
    "template_partials",
    "django_filters",
    "csp",
    "axes",
    "django_tasks",
    "django_tasks_db",
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
    # Last, as django-axes asks: it turns a locked-out sign-in into the lockout page.
    "axes.middleware.AxesMiddleware",
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
if _db["ENGINE"] == "django.db.backends.postgresql":
    # Parameters bound by the server, so that the context compiler can prepare its statements
    # (docs/compiler.md "Cost"). False turns this off, for a pooler in transaction mode that cannot keep
    # prepared statements (such as PgBouncer before 1.21). They live as long as their connection, so
    # they pay off across requests with DATABASE_POOL.
    if env_bool("DATABASE_PREPARED_STATEMENTS", True):
        _db.setdefault("OPTIONS", {})["server_side_binding"] = True
    # A pool of connections in each process (psycopg_pool), kept from one request to the next with
    # their prepared statements. Each is checked as it is taken, so a restarted database or a dropped
    # connection costs a reconnection, not a failed request. The server (config.serve) turns it on; a
    # command opens one connection and exits, and is told at once when it cannot.
    if env_bool("DATABASE_POOL", False):
        if _db.get("CONN_MAX_AGE"):
            raise ImproperlyConfigured(
                "DATABASE_CONN_MAX_AGE keeps connections itself and cannot be used with the pool: "
                "set DATABASE_POOL=false to use it"
            )
        _pool_size = env_int("DATABASE_POOL_MAX_SIZE", 2)
        if _pool_size < 1:
            raise ImproperlyConfigured(f"DATABASE_POOL_MAX_SIZE must be 1 or more, got {_pool_size}")
        _db.setdefault("OPTIONS", {})["pool"] = {"min_size": 1, "max_size": _pool_size}
        _db["CONN_HEALTH_CHECKS"] = True  # with a pool: psycopg_pool's check as each connection is taken
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
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

# Sign-in throttling (django-axes), for the dashboard's login and the admin's alike: after
# CANON_LOGIN_FAILURE_LIMIT wrong passwords for one user name from one address, that pair is refused
# with a 429 page for CANON_LOGIN_COOLOFF_MINUTES. Other users, and the same user elsewhere, are
# unaffected; a successful sign-in clears the count. Attempts are stored in the database.
AUTHENTICATION_BACKENDS = [
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT = env_int("CANON_LOGIN_FAILURE_LIMIT", 5)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("CANON_LOGIN_COOLOFF_MINUTES", 15))
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
AXES_RESET_ON_SUCCESS = True
AXES_LOCKOUT_TEMPLATE = "registration/locked_out.html"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
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

SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SECURE = env_bool("DJANGO_SECURE_COOKIES", False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
# HTTPS, all off by default so development over plain HTTP works; docs/configuration.md "Production settings"
# turn them on. Behind a proxy that terminates TLS, DJANGO_SECURE_PROXY_SSL_HEADER names the request
# header it sets to "https" (e.g. HTTP_X_FORWARDED_PROTO) -- only when the proxy always sets or strips it.
SECURE_SSL_REDIRECT = env_bool("DJANGO_SECURE_SSL_REDIRECT", False)
SECURE_HSTS_SECONDS = env_int("DJANGO_SECURE_HSTS_SECONDS", 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("DJANGO_SECURE_HSTS_INCLUDE_SUBDOMAINS", False)
SECURE_HSTS_PRELOAD = env_bool("DJANGO_SECURE_HSTS_PRELOAD", False)
_proxy_ssl_header = os.environ.get("DJANGO_SECURE_PROXY_SSL_HEADER", "").strip()
if _proxy_ssl_header and not re.fullmatch(r"HTTP_[A-Z0-9_]+", _proxy_ssl_header):
    raise ImproperlyConfigured(
        "DJANGO_SECURE_PROXY_SSL_HEADER must be a request.META name such as HTTP_X_FORWARDED_PROTO, "
        f"got {_proxy_ssl_header!r}"
    )
SECURE_PROXY_SSL_HEADER = (_proxy_ssl_header, "https") if _proxy_ssl_header else None
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

# Writes (POST/PATCH, MCP write tools) one agent's tokens may make per project in a rolling minute; past
# it, 429 with Retry-After. Coordinator tokens are exempt; 0 turns the limit off. Counted in the cache below.
CANON_AGENT_WRITES_PER_MINUTE = env_int("CANON_AGENT_WRITES_PER_MINUTE", 120)
# Also list the MCP tool `submit_inbox_entry` under the name Squad's agents call, `squad_decide`
# (docs/mcp.md).
CANON_MCP_SQUAD_ALIAS = env_bool("CANON_MCP_SQUAD_ALIAS", False)
# Canon's own data outside every workspace: copies of team files taken before Canon first replaces them,
# and the cache.
CANON_DATA_DIR = Path(os.environ.get("CANON_DATA_DIR", BASE_DIR / "var"))
# The cache holds the write counts: files under CANON_DATA_DIR, so that every worker process of the server
# counts an agent's writes together (local memory would give each process a limit of its own).
CACHES = {
    "default": {
        "BACKEND": "django.core.cache.backends.filebased.FileBasedCache",
        "LOCATION": str(CANON_DATA_DIR / "cache"),
    }
}

# Context compiler defaults (docs/compiler.md), overridable per call.
CANON_CONTEXT_MAX_ITEMS = env_int("CANON_CONTEXT_MAX_ITEMS", 20)
CANON_CONTEXT_MAX_TOKENS = env_int("CANON_CONTEXT_MAX_TOKENS", 4000)
# The relevant-knowledge layer (chosen for the run's task) and the current-session layer have budgets
# of their own; boundaries are never cut, their size is reported.
CANON_CONTEXT_RELEVANT_TOKENS = env_int("CANON_CONTEXT_RELEVANT_TOKENS", 2000)
CANON_CONTEXT_SESSION_TOKENS = env_int("CANON_CONTEXT_SESSION_TOKENS", 1000)
# Compilations recorded for a run (what each agent was told) are kept this many days; the
# `prune_compilations` command removes older ones (run it from cron).
CANON_COMPILATIONS_KEEP_DAYS = env_int("CANON_COMPILATIONS_KEEP_DAYS", 90)
# The Scribe merges entries that carry no run id only when they were made during the run as the server
# saw it: never earlier than this many hours before the Scribe is called (docs/ledger.md "Scribe").
CANON_SCRIBE_RUN_HOURS = env_int("CANON_SCRIBE_RUN_HOURS", 24)

# Memory lifecycle (docs/ledger.md "Memory"), by source. Time-to-live in days, set on a memory when it
# is written (None: never expires); half-life in days of the recency factor in relevance ranking (None:
# never decays); and the weight of each source in that ranking. A pinned memory neither expires nor
# decays, and a coordinator's memories never decay.
CANON_MEMORY_TTL_DAYS: dict[str, int | None] = {
    "agent": 180,
    "session_summary": 90,
    "notes": None,
    "coordinator": None,
    "inbox": None,
    "import": None,
    "admin": None,
}
CANON_MEMORY_HALF_LIFE_DAYS: dict[str, int | None] = {
    "agent": 30,
    "session_summary": 14,
    "notes": 90,
    "coordinator": None,
    "inbox": 90,
    "import": 90,
    "admin": None,
}
CANON_MEMORY_SOURCE_WEIGHTS: dict[str, float] = {
    "coordinator": 1.5,
    "inbox": 1.2,
    "admin": 1.2,
    "notes": 1.0,
    "import": 1.0,
    "agent": 1.0,
    "session_summary": 0.8,
    "episode": 0.9,
}
# Two memories whose token-set similarity (rapidfuzz, 0-100) reaches this are flagged as near-duplicates.
CANON_NEAR_DUPLICATE_SIMILARITY = env_int("CANON_NEAR_DUPLICATE_SIMILARITY", 90)
# How long a merge or a rejection can be undone, in seconds after it (docs/ledger.md "Undo").
CANON_UNDO_SECONDS = env_int("CANON_UNDO_SECONDS", 600)

# Best-effort mirror export after every ledger write that changes the files.
CANON_EXPORT_ON_WRITE = env_bool("CANON_EXPORT_ON_WRITE", True)
# Background work (django-tasks): each export after a write is a task row in the database, committed
# with the write, and run by `manage.py db_worker` (docs/mirror.md "When exports run").
TASKS = {"default": {"BACKEND": "django_tasks_db.DatabaseBackend"}}
# One process at a time mirrors a project: it holds the project's lease, renewed while it works, which a
# holder that died loses after this many seconds. Commands, the API and the dashboard wait up to
# CANON_MIRROR_WAIT_SECONDS for it, then report the project busy.
CANON_MIRROR_LEASE_SECONDS = env_int("CANON_MIRROR_LEASE_SECONDS", 300)
CANON_MIRROR_WAIT_SECONDS = env_int("CANON_MIRROR_WAIT_SECONDS", 30)
if CANON_MIRROR_LEASE_SECONDS < 1 or CANON_MIRROR_WAIT_SECONDS < 0:
    raise ImproperlyConfigured(
        "CANON_MIRROR_LEASE_SECONDS must be 1 or more and CANON_MIRROR_WAIT_SECONDS 0 or more, got "
        f"{CANON_MIRROR_LEASE_SECONDS} and {CANON_MIRROR_WAIT_SECONDS}"
    )

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s: %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "loggers": {
        "canon": {"handlers": ["console"], "level": os.environ.get("CANON_LOG_LEVEL", "INFO")},
    },
}
