"""Settings for the test suite and the type checker: `config.settings` with a fixed, public secret key.

The real settings refuse to start with DJANGO_DEBUG off and no DJANGO_SECRET_KEY; the suite runs with
DEBUG off, so it brings a key of its own. Never serve with these settings.
"""

from __future__ import annotations

import os

os.environ.setdefault("DJANGO_SECRET_KEY", "canon-test-suite-key-public-never-use-it-to-serve-anything")

from config.settings import *  # noqa: F403

# Tasks run at once in the process that queues them, once the write commits. The worker tests start
# processes with CANON_TEST_TASKS=database to keep the real queue (the rows `manage.py db_worker` runs).
if os.environ.get("CANON_TEST_TASKS") != "database":
    TASKS = {"default": {"BACKEND": "django_tasks.backends.immediate.ImmediateBackend"}}

# Each test process counts writes in its own memory: the suite's processes run side by side, and a test
# clears the counts it starts with. The production servers the tests start use the real, shared cache.
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "canon-tests"}}
