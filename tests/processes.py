"""Other processes on the test database: a web process, a worker, a cron job, as production runs them."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import quote

from django.conf import settings
from django.db import connection

MANAGE = str(Path(settings.BASE_DIR) / "manage.py")


def database_url() -> str:
    """The URL of the database this test runs on (its test database), for a process of its own."""
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    password = f":{quote(db['PASSWORD'], safe='')}" if db.get("PASSWORD") else ""
    return f"postgres://{quote(db['USER'] or '', safe='')}{password}@{db['HOST']}:{db['PORT'] or 5432}/{db['NAME']}"


def environment(**extra: str) -> dict[str, str]:
    """Settings for a process on this test's database, with the real task queue (the database backend)."""
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.test_settings",
        "DATABASE_URL": database_url(),
        "CANON_TEST_TASKS": "database",
        "CANON_EXPORT_ON_WRITE": "true",
        **extra,
    }


def python(script: str, *args: str, **extra: str) -> subprocess.Popen[str]:
    """Start `script` (Django set up first) in a new interpreter; its stdout is a pipe."""
    code = "import django\ndjango.setup()\n" + script
    return subprocess.Popen(
        [sys.executable, "-c", code, *args],
        cwd=settings.BASE_DIR,
        env=environment(**extra),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def manage(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, MANAGE, *args],
        cwd=settings.BASE_DIR,
        env=environment(**extra),
        capture_output=True,
        text=True,
        timeout=120,
    )
