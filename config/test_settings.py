"""Settings for the test suite and the type checker: `config.settings` with a fixed, public secret key.

The real settings refuse to start with DJANGO_DEBUG off and no DJANGO_SECRET_KEY; the suite runs with
DEBUG off, so it brings a key of its own. Never serve with these settings.
"""

from __future__ import annotations

import os

os.environ.setdefault("DJANGO_SECRET_KEY", "canon-test-suite-key-public-never-use-it-to-serve-anything")

from config.settings import *  # noqa: F403
