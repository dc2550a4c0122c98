"""Inbox submissions per second through the agent API.

    python bench/api.py                                   # SQLite (temporary file)
    python bench/api.py --database-url postgres://postgres@127.0.0.1:5432/postgres
    python bench/api.py --count 5000 --threads 4

Each submission is a full request through Django and django-ninja (bearer-token auth, JSON parsing,
validation, slug placement, insert) made with django.test.Client; with --threads, that many clients
submit at once, each with its own database connection and agent token.
"""

from __future__ import annotations

import os
import threading
import time

from _setup import parse_args, setup_django


def main() -> None:
    args = parse_args(
        __doc__.splitlines()[0],
        [
            ("--count", {"type": int, "default": 2000}),
            ("--threads", {"type": int, "default": 1}),
        ],
    )
    # One client writes far faster than an agent may (CANON_AGENT_WRITES_PER_MINUTE): measure without it.
    os.environ["CANON_AGENT_WRITES_PER_MINUTE"] = "0"
    engine = setup_django(args.database_url, "api")
    from django.db import connection
    from django.test import Client

    from ledger import services
    from ledger.models import InboxEntry

    project, _ = services.project_create_or_update(slug="bench", name="Bench")
    secrets = [
        services.token_issue(project=project, role="agent", agent_name=f"agent-{t}")[1]
        for t in range(args.threads)
    ]
    per_thread = args.count // args.threads
    errors: list[int] = []

    def submit(t: int) -> None:
        client = Client()
        auth = f"Bearer {secrets[t]}"
        for i in range(per_thread):
            response = client.post(
                "/api/projects/bench/decisions/inbox",
                {
                    "slug": f"proposal-{i % 500}-{t}-{i}",
                    "type": "technical",
                    "content": f"Proposal {i} " * 20,
                },
                content_type="application/json",
                HTTP_AUTHORIZATION=auth,
            )
            if response.status_code not in (200, 201):
                errors.append(response.status_code)
        connection.close()

    started = time.perf_counter()
    threads = [threading.Thread(target=submit, args=(t,)) for t in range(args.threads)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    total = per_thread * args.threads
    stored = InboxEntry.objects.count()
    print(
        f"{engine}: {total} submissions with {args.threads} thread(s) in {elapsed:.2f} s = "
        f"{total / elapsed:.0f}/s; stored {stored}; errors {len(errors)}"
    )


if __name__ == "__main__":
    main()
