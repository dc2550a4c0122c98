"""Shared set-up for the benchmarks: a throwaway database, migrated, and Django ready.

`--database-url` (or DATABASE_URL) picks the engine: SQLite (a temporary file) by default, or a
PostgreSQL URL whose database is created before and dropped after the run. Never the real ones.
"""

from __future__ import annotations

import argparse
import atexit
import os
import secrets
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlparse, urlunparse

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"
# A script run as `python bench/x.py` has bench/ first on its path, where bench/http.py would stand in for
# the standard library's `http` (which Django imports). Every benchmark imports this module first.
sys.path[:] = [str(ROOT)] + [p for p in sys.path if Path(p or ".").resolve() != BENCH]


def parse_args(
    description: str, extra: list[tuple[str, dict[str, object]]] | None = None
) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--database-url", default=os.environ.get("BENCH_DATABASE_URL", ""))
    for flag, options in extra or []:
        parser.add_argument(flag, **options)  # type: ignore[arg-type]
    return parser.parse_args()


def setup_django(database_url: str, name: str) -> str:
    """Point Django at a fresh database for this benchmark and migrate it. Returns the engine label."""
    if database_url.startswith("postgres"):
        import psycopg

        parsed = urlparse(database_url)
        db_name = f"canon_bench_{name}"
        admin_url = urlunparse(parsed._replace(path="/postgres"))
        with psycopg.connect(admin_url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{db_name}"')
            conn.execute(f'CREATE DATABASE "{db_name}"')

        def drop() -> None:
            from django.db import connections

            connections.close_all()
            with psycopg.connect(admin_url, autocommit=True) as conn:
                conn.execute(f'DROP DATABASE IF EXISTS "{db_name}" WITH (FORCE)')

        atexit.register(drop)
        os.environ["DATABASE_URL"] = urlunparse(parsed._replace(path=f"/{db_name}"))
        label = "postgresql"
    else:
        folder = tempfile.mkdtemp(prefix=f"canon-bench-{name}-")
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        os.environ["DATABASE_URL"] = f"sqlite:///{folder}/bench.sqlite3"
        label = "sqlite"
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ["CANON_EXPORT_ON_WRITE"] = "false"
    # Production settings (DEBUG off) need a secret key; a benchmark's database is thrown away.
    os.environ.setdefault("DJANGO_SECRET_KEY", secrets.token_urlsafe(50))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    return label


def memory_row(**fields: Any) -> Any:
    """An unsaved AgentMemory with the derived columns that `services.memory_record` fills (bulk_create)."""
    from ledger.models import AgentMemory
    from ledger.services import IMPORTANCE_RANK, content_sha256
    from ledger.tokens import count_tokens
    from ledger.values import CROSS_TEAM_TAG, content_key, tag_index

    tags = fields.setdefault("tags", [])
    content = fields["content"]
    return AgentMemory(
        importance_rank=IMPORTANCE_RANK[fields["importance"]],
        tag_index=tag_index(tags),
        cross_team=CROSS_TEAM_TAG in tags,
        content_sha256=content_sha256(content),
        content_key=content_key(content),
        tokens=count_tokens(content),
        **fields,
    )


def percentile(values: list[float], pct: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(pct / 100 * (len(ordered) - 1))))
    return ordered[index]
