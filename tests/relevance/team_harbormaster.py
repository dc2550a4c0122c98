"""Harbormaster: berth bookings for small marinas (Django, PostgreSQL, HTMX, deployed with Kamal).

Agents: Vesna (Lead), Tobiah (Backend), Maëlle (Frontend), Ruslan (DevOps), Ingrid (Tester).
"""

# The ledger is written as people write: en dashes, arrows and multiplication signs stay.
# ruff: noqa: RUF001

from __future__ import annotations

from tests.relevance.corpus import (
    ABANDONED,
    AGENT,
    ARCHITECTURAL,
    CORE,
    FAILED,
    INBOX,
    LEARNING,
    PATTERN,
    PROCESS,
    SCOPE,
    SUCCEEDED,
    UPDATE,
    USER,
    Decision,
    Episode,
    Memory,
    Session,
    Task,
    Team,
)

VESNA, TOBIAH, MAELLE, RUSLAN, INGRID = "Vesna", "Tobiah", "Maëlle", "Ruslan", "Ingrid"

# fmt: off
DECISIONS = (
    Decision("hm-d-availability", VESNA, "Berth availability is computed, never stored",
             "**By:** Vesna (Lead)\n"
             "**What:** Whether a berth is free is always computed from `Booking` rows and `BerthClosure` "
             "rows for the asked period. No `is_available` column, no cache table.\n"
             "**Why:** Two sources of truth drifted in the prototype and double-booked the guest pontoon.",
             300, type=ARCHITECTURAL),
    Decision("hm-d-no-app", VESNA, "No native mobile app in 2026 — responsive web only",
             "**By:** Vesna (Lead)\n"
             "**What:** Harbourmasters and guests use the web app on their phones. No App Store or Play "
             "Store release this year; no React Native spike either.\n"
             "**Why:** Four marinas, one team. A second client doubles every change.",
             290, type=SCOPE),
    Decision("hm-d-no-pos", VESNA, "Scope: Harbormaster does not sell fuel, ice or shop items",
             "**By:** Vesna (Lead)\n"
             "**What:** No point-of-sale features. Marinas keep their till for the fuel dock and the kiosk.\n"
             "**Why:** Card-present payments, stock and VAT rules for goods are a different product.",
             200, type=SCOPE),
    Decision("hm-d-compose-deploy", RUSLAN, "Deploy with Docker Compose over SSH",
             "**By:** Ruslan (DevOps)\n"
             "**What:** `scripts/deploy.sh` runs `docker compose pull && docker compose up -d` on "
             "hel1-app-1 and hel1-app-2, one after the other.\n"
             "**Why:** Simple enough for two hosts.",
             280),
    Decision("hm-d-jobs-postgres", TOBIAH, "Queue reminder jobs in PostgreSQL, not Redis",
             "**By:** Tobiah (Backend)\n"
             "**What:** Background work (reminder emails, invoice PDFs, Stripe follow-ups) is a row in "
             "`jobs_job`. `manage.py run_worker` claims rows with `SELECT … FOR UPDATE SKIP LOCKED`, "
             "`ORDER BY run_after, id`, and marks them done in the same transaction.\n"
             "**Why:** One database to back up and restore; the load is a few hundred jobs a day. Redis "
             "would be one more thing to patch on two hosts.",
             270),
    Decision("hm-d-celery-beat", TOBIAH, "Use Celery beat for the reminder schedule",
             "**By:** Tobiah (Backend)\n"
             "**What:** A `celery beat` container sends reminder emails every 5 minutes.\n"
             "**Why:** It is what the Django tutorials use.",
             265, archived=True),
    Decision("hm-d-money", TOBIAH, "Money is integer minor units, currency per marina",
             "**By:** Tobiah (Backend)\n"
             "**What:** Every amount is an `int` of øre/cents (`amount_minor`) beside `Marina.currency` "
             "(NOK, EUR, SEK). `Decimal` only at the edges; never `float`.\n"
             "**Why:** The pilot's float totals were off by one øre on 3 % of invoices.",
             262),
    Decision("hm-d-branches", VESNA, "Branches are named type/HM-ticket-slug",
             "**By:** Vesna (Lead)\n"
             "**What:** `feat/HM-123-berth-map-legend`, `fix/HM-140-refund-twice`, "
             "`chore/HM-151-bump-django`. Squad agents put their name first: "
             "`squad/tobiah/fix/HM-140-refund-twice`. No branch without a ticket number.\n"
             "**Why:** The board links branches to tickets by the `HM-` number; unnumbered branches "
             "got lost for weeks.",
             255, type=PROCESS),
    Decision("hm-d-commit-footer", VESNA, "Ticket ids go in commit footers",
             "**By:** Vesna (Lead)\n"
             "**What:** Every commit ends with a `Refs HM-123` footer (or `Fixes HM-123` for the last "
             "one). Squash merges keep the footer of the PR title.\n"
             "**Why:** `git log --grep HM-123` answers \"what changed for this ticket\".",
             254, type=PROCESS),
    Decision("hm-d-directive-force-push", USER, "User directive",
             "**By:** user (via Copilot)\n"
             "**What:** Never force-push to `main` or to a release branch.\n"
             "**Why:** Lost a day of work twice.",
             250, type=PROCESS),
    Decision("hm-d-htmx", MAELLE, "HTMX partials, no single-page framework",
             "**By:** Maëlle (Frontend)\n"
             "**What:** Pages are Django templates; interactive parts swap partials with HTMX "
             "(`hx-get`, `hx-post`, `hx-target`). No React, no Vue, no build step beyond "
             "`tailwind`-free plain CSS.\n"
             "**Why:** Harbourmasters use old Android tablets on slow marina Wi-Fi; a 30 KB page beats "
             "a 400 KB bundle.",
             248),
    Decision("hm-d-django-lts", TOBIAH, "Pin Django to the LTS line",
             "**By:** Tobiah (Backend)\n"
             "**What:** `Django>=5.2,<5.3` in `pyproject.toml`. Patch releases are taken within a week; "
             "the next line only when it is an LTS (6.2).\n"
             "**Why:** Three years of security fixes per line; every upgrade costs a week of template and "
             "admin checks.",
             240),
    Decision("hm-d-python-uv", RUSLAN, "Python 3.12 everywhere, locked with uv",
             "**By:** Ruslan (DevOps)\n"
             "**What:** The image, CI and laptops run Python 3.12. Dependencies are locked in `uv.lock`, "
             "which is committed; `uv sync --frozen` in the Dockerfile and in CI.\n"
             "**Why:** pip-tools and a hand-kept `requirements.txt` drifted apart twice.",
             235),
    Decision("hm-d-stripe-checkout", TOBIAH, "Deposits through Stripe Checkout only",
             "**Author:** Tobiah\n"
             "**Date:** 2026-04-02\n"
             "**Status:** Adopted\n\n"
             "## Context\n\n"
             "Marinas want a deposit when a guest books a berth for more than three nights. We looked at "
             "taking cards in our own form (Stripe Elements), Vipps and Stripe Checkout.\n\n"
             "## Decision\n\n"
             "Deposits are taken with a Stripe Checkout session created by "
             "`payments.checkout_deposit(booking)`. The booking is confirmed by the "
             "`checkout.session.completed` webhook, never by the browser's return URL. Refunds go through "
             "`payments.refund_deposit()`.\n\n"
             "## Consequences\n\n"
             "- No card data touches our servers (SAQ A).\n"
             "- A guest who closes the tab after paying is still confirmed by the webhook.\n"
             "- Vipps can come later as another Checkout payment method.",
             238),
    Decision("hm-d-utc", TOBIAH, "Store UTC, show the marina's time",
             "**By:** Tobiah (Backend)\n"
             "**What:** All timestamps are stored in UTC. Each `Marina` has `tz` (`Europe/Oslo`, "
             "`Europe/Stockholm`…); templates render with `{% timezone marina.tz %}`. Arrival and "
             "departure are dates, not datetimes.\n"
             "**Why:** A guest arriving on the night the clocks change was shown as departing before "
             "arriving.",
             230),
    Decision("hm-d-i18n", MAELLE, "English source strings, Bokmål and German translations",
             "**By:** Maëlle (Frontend)\n"
             "**What:** Templates and code are written in English and marked with `{% translate %}` / "
             "`gettext`. `locale/nb/` and `locale/de/` are kept complete before each release; Swedish "
             "falls back to English.\n"
             "**Why:** Guests are mostly German and Norwegian sailors.",
             226),
    Decision("hm-d-seasons", TOBIAH, "Price lists per season; seasons never overlap",
             "**By:** Tobiah (Backend)\n"
             "**What:** `Season(marina, period daterange, price_list)`. An exclusion constraint forbids "
             "two seasons of one marina overlapping. A stay spanning two seasons is priced night by night.\n"
             "**Why:** Marinas price July differently from May; overlapping seasons made the price of a "
             "night depend on query order.",
             220),
    Decision("hm-d-backups", RUSLAN, "Nightly pg_dump, kept 30 days, restore drill every month",
             "**By:** Ruslan (DevOps)\n"
             "**What:** A cron on hel1-app-1 runs `pg_dump -Fc` at 02:30 and uploads to object storage. "
             "Dumps are kept 30 days (bucket lifecycle rule). On the first Monday of each month someone "
             "restores the latest dump into `hm_restore` and opens the admin.\n"
             "**Why:** A backup nobody restored is a hope, not a backup.",
             215),
    Decision("hm-d-feature-flags", TOBIAH, "Feature flags with django-waffle, removed within two releases",
             "**By:** Tobiah (Backend)\n"
             "**What:** Unfinished features hide behind a waffle flag named `hm_<feature>`. A flag that has "
             "been on for everyone for two releases is deleted with its dead branch.\n"
             "**Why:** The pilot had eleven flags nobody remembered.",
             205),
    Decision("hm-d-playwright", INGRID, "Playwright for browser tests, pytest for the rest",
             "**By:** Ingrid (Tester)\n"
             "**What:** End-to-end tests use `pytest-playwright` (Chromium only in CI) under `tests/e2e/`. "
             "Everything else is plain pytest with pytest-django. No Selenium, no Cypress.\n"
             "**Why:** One runner, one language, and Playwright's auto-waiting cut our flaky tests in half.",
             198),
    Decision("hm-d-calver", RUSLAN, "Calendar versioning for releases",
             "**By:** Ruslan (DevOps)\n"
             "**What:** Releases are tagged `vYYYY.MM.N` (`v2026.06.2` is the second release of June "
             "2026). The tag triggers the production deploy.\n"
             "**Why:** Marinas ask \"is the June fix live?\", never \"is 1.14 live?\".",
             190, type=PROCESS),
    Decision("hm-d-reviews", VESNA, "One human approval per pull request; agents approve only tests and docs",
             "**By:** Vesna (Lead)\n"
             "**What:** Every PR to `main` needs one approving review from a person. An agent's review "
             "counts as the approval only when the PR touches nothing but `tests/`, `docs/` or "
             "`locale/` files.\n"
             "**Why:** Agents approved each other's migrations in week two.",
             185, type=PROCESS),
    Decision("hm-d-postmark", TOBIAH, "Transactional email through Postmark",
             "**By:** Tobiah (Backend)\n"
             "**What:** Booking confirmations, reminders and receipts are sent with Postmark (message "
             "stream `outbound`). Templates live in `templates/email/` as Django templates with a text "
             "and an HTML part. No newsletters or marketing mail from the app.\n"
             "**Why:** Deliverability to Norwegian ISPs was poor from our own SMTP relay.",
             180),
    Decision("hm-d-sentry", RUSLAN, "Sentry for errors, without personal data",
             "**By:** Ruslan (DevOps)\n"
             "**What:** `sentry_sdk.init(send_default_pii=False)`; a `before_send` hook drops request "
             "bodies and replaces e-mail addresses and phone numbers in messages with `[redacted]`.\n"
             "**Why:** Guests' contact details are personal data under GDPR; error reports are not the "
             "place for them.",
             172),
    Decision("hm-d-reminders-jobs", TOBIAH, "Arrival reminders are jobs with run_after, not cron",
             "**By:** Tobiah (Backend)\n"
             "**What:** Confirming a booking enqueues a `send_arrival_reminder` job with `run_after` = "
             "arrival date − 1 day at 10:00 in the marina's zone. Cancelling a booking deletes its "
             "pending jobs.\n"
             "**Why:** Celery beat is gone; one worker, one queue.",
             168),
    Decision("hm-d-cancellation-rules", TOBIAH, "Cancellation policies are data, not code",
             "**By:** Tobiah (Backend)\n"
             "**What:** Each marina's policy is rows of `CancellationRule(days_before, refund_percent)`. "
             "`refund_for(booking, cancelled_at)` picks the rule with the largest `days_before` that still "
             "applies.\n"
             "**Why:** Every marina wanted a different policy; code branches per marina were unreadable.",
             160),
    Decision("hm-d-kiosk-api", TOBIAH, "Read-only JSON API for harbour-office kiosks",
             "**By:** Tobiah (Backend)\n"
             "**What:** Kiosks read `/api/v1/berths/` and `/api/v1/arrivals/today/` with a per-kiosk "
             "bearer token (`KioskToken`, hashed). The API is read-only; nothing is booked from a kiosk.\n"
             "**Why:** The tablets at the harbour office show today's arrivals; they are in a public room.",
             150),
    Decision("hm-d-wcag", MAELLE, "WCAG 2.2 AA, checked in CI",
             "**By:** Maëlle (Frontend)\n"
             "**What:** Every page meets WCAG 2.2 AA. `tests/e2e/test_a11y.py` runs axe-core on each "
             "page; a new violation fails the build.\n"
             "**Why:** Two marinas are run by municipalities that must meet the EU accessibility act.",
             140),
    Decision("hm-d-migrations", VESNA, "Migrations are reversible or say why not",
             "**By:** Vesna (Lead)\n"
             "**What:** Every migration has a working reverse. One that cannot (a data migration that "
             "drops information) starts with a `# irreversible: <reason>` comment and is reviewed by "
             "Vesna or Ruslan.\n"
             "**Why:** A failed deploy on Kamal rolls the app back but not the schema.",
             130, type=PROCESS),
    Decision("hm-d-kamal", RUSLAN, "Deploy with Kamal 2 to both Hetzner hosts",
             "**By:** Ruslan (DevOps)\n"
             "**What:** `kamal deploy` from the release workflow, kamal-proxy in front on both hosts, "
             "healthcheck on `/up`. `config/deploy.yml` is the only deploy configuration; "
             "`scripts/deploy.sh` is deleted.\n"
             "**Why:** Zero-downtime switches and rollbacks (`kamal rollback <version>`) without writing "
             "them ourselves.",
             120, replaces="hm-d-compose-deploy"),
    Decision("hm-d-handbook", RUSLAN, "Handbook site published by publish-handbook.sh, every publish tagged",
             "**By:** Ruslan (DevOps)\n"
             "**What:** The harbourmasters' handbook (MkDocs, `handbook/`) is built and pushed to the "
             "`gh-pages` branch by `scripts/publish-handbook.sh`, run from `main` only. Each publish "
             "creates a tag `handbook-YYYYMMDD-N`; `scripts/publish-handbook.sh --tag "
             "handbook-20260914-1` publishes that tag's build again.\n"
             "**Why:** A broken build once published an empty site and nobody knew which build was good.",
             95),
    Decision("hm-d-photo-storage", TOBIAH, "Berth photos in object storage, resized on upload",
             "**By:** Tobiah (Backend)\n"
             "**What:** Photos go to the `hm-media` bucket through django-storages; uploads are resized "
             "to 1600 px and 400 px (`berths/images.py`), originals are not kept.\n"
             "**Why:** Phones upload 8 MB photos; the berth map loaded 60 MB.",
             70),
)

MEMORIES = (
    # --- Vesna (Lead) ---
    Memory("hm-m-vesna-project", VESNA, CORE,
           "**Project:** Harbormaster — berth bookings for small marinas in Norway and Sweden.\n"
           "**Stack:** Django 5.2, PostgreSQL 16, HTMX, Kamal 2 on two Hetzner hosts.", 300),
    Memory("hm-m-vesna-role", VESNA, CORE,
           "**My role:** Lead. Architecture, scope, reviews; I split work into HM tickets.", 300),
    Memory("hm-m-vesna-scope-creep", VESNA, LEARNING,
           "**Scope creep from marinas:** every marina asks for fuel-dock sales and a shop in the first "
           "meeting. Point them at the scope decision and to their existing till; don't promise a later "
           "phase.", 150),
    Memory("hm-m-vesna-review-checklist", VESNA, PATTERN,
           "Review checklist: migration reversible (or `# irreversible:` with a reason); writes in "
           "services, not views; strings marked for translation; a test named for the ticket; no "
           "`print()` left.", 120, shared=True, source=INBOX),
    Memory("hm-m-vesna-update-kamal", VESNA, UPDATE,
           "📌 Team update (2026-07-29T09:12Z): Kamal 2 is the deploy tool; Compose deploys are gone — "
           "decided by Ruslan", 120),
    Memory("hm-m-vesna-onboarding", VESNA, LEARNING,
           "**Onboarding a marina:** create the `Marina` in the admin, import berths from their "
           "spreadsheet with `manage.py import_berths marina.xlsx`, set `tz` and `currency`, then the "
           "seasons. The harbourmaster gets a staff account, never superuser.", 80),
    Memory("hm-m-vesna-estimates", VESNA, LEARNING,
           "Estimates for anything touching payments double once Stripe's test clocks and webhooks are "
           "involved; plan two days of testing per payment change.", 60),
    # --- Tobiah (Backend) ---
    Memory("hm-m-tobiah-role", TOBIAH, CORE,
           "**My role:** Backend. I own bookings, pricing, payments and the job worker.", 280),
    Memory("hm-m-tobiah-beat", TOBIAH, LEARNING,
           "Reminder emails are sent by Celery beat every 5 minutes (`reminders.tasks.send_due`).", 265,
           archived=True),
    Memory("hm-m-tobiah-services", TOBIAH, PATTERN,
           "Writes are functions in `bookings/services.py` named `booking_create`, `booking_cancel`, "
           "`booking_move`; views and the admin never call `.save()` on a booking.", 250),
    Memory("hm-m-tobiah-skip-locked", TOBIAH, LEARNING,
           "**SKIP LOCKED needs an ORDER BY:** without `ORDER BY run_after, id` two workers kept taking "
           "the newest jobs and old reminders waited for hours. And the retry path "
           "(`jobs/worker.py::claim_retry`) must use the same claim query, or two workers can take the "
           "same job: that is how guests got the reminder twice.", 100, importance="high", source=AGENT),
    Memory("hm-m-tobiah-jobs-heartbeat", TOBIAH, LEARNING,
           "**Long jobs heartbeat:** an invoice-PDF job that runs past 10 minutes is considered dead and "
           "re-queued; long jobs call `job.heartbeat()` every minute.", 200, shared=True, source=INBOX),
    Memory("hm-m-tobiah-webhook-secret", TOBIAH, LEARNING,
           "**Stripe webhook secret per environment:** staging uses the `whsec_…` secret printed by "
           "`stripe listen`; production's is in 1Password. A 400 \"No signatures found matching the "
           "expected signature\" means the wrong secret, not a bad payload.", 230),
    Memory("hm-m-tobiah-retries-old", TOBIAH, LEARNING,
           "Stripe gives up on a webhook after 24 hours.", 236),
    Memory("hm-m-tobiah-retries", TOBIAH, LEARNING,
           "Stripe retries a failed webhook delivery for up to three days in live mode (a few hours in "
           "test mode) with exponential backoff; our handler must be idempotent on `event.id` "
           "(`ProcessedEvent`).", 160, source=AGENT, corrects="hm-m-tobiah-retries-old"),
    Memory("hm-m-tobiah-refund-deposit", TOBIAH, LEARNING,
           "**Deposit refunds:** always `payments.refund_deposit(booking, by=…)`, which writes a `Refund` "
           "row, calls Stripe, then sets `booking.deposit_state = REFUNDED`. Calling "
           "`stripe.Refund.create` directly (HM-212) left the booking showing \"deposit paid\" after the "
           "money had gone back.", 130, importance="high", source=AGENT),
    Memory("hm-m-tobiah-exclusion", TOBIAH, LEARNING,
           "**Double bookings:** `Booking` has an exclusion constraint (`btree_gist`) on `(berth WITH =, "
           "period WITH &&)` for confirmed bookings. The form's error comes from the IntegrityError; "
           "`BookingForm.clean` maps it to \"berth already taken for these nights\".", 210),
    Memory("hm-m-tobiah-half-open", TOBIAH, LEARNING,
           "**Seasons are half-open ranges** `[start, end)`: the night of the season's last date belongs "
           "to the next season. `price_for_stay()` walks night by night; don't price a stay by its "
           "arrival date alone.", 200, shared=True, source=INBOX),
    Memory("hm-m-tobiah-berth-map-queries", TOBIAH, LEARNING,
           "**Slow berth map:** the map page did ~900 queries (one `current_booking` per berth). "
           "`Prefetch('bookings', queryset=Booking.objects.overlapping(today), "
           "to_attr='today_bookings')` brought it to 7. `assertNumQueries(7)` in "
           "`test_berth_map_query_count` keeps it there.", 175),
    Memory("hm-m-tobiah-dst", TOBIAH, LEARNING,
           "**Reminders and daylight saving:** `run_after` must be computed as a local time in the "
           "marina's zone, then converted to UTC. Adding 24 h to a UTC time sent reminders an hour early "
           "in the week the clocks changed.", 150, source=AGENT),
    Memory("hm-m-tobiah-rounding", TOBIAH, LEARNING,
           "**Price rounding:** nightly prices are in øre; the total is rounded half-even once per "
           "booking, never per night, or long stays drift by a krone against the marina's own sums.", 190),
    Memory("hm-m-tobiah-postmark-sandbox", TOBIAH, LEARNING,
           "**Postmark in staging:** staging uses the sandbox server token; mails appear in Postmark's "
           "activity tab and are never delivered. If a tester \"got no email\", that's why.", 170),
    Memory("hm-m-tobiah-kiosk-tokens", TOBIAH, LEARNING,
           "**Kiosk tokens:** stored as SHA-256 hashes in `KioskToken`; the plain token is shown once "
           "when issued. A lost or stolen tablet: revoke its token in the admin (Kiosk tokens → revoke) "
           "and issue a new one; nothing else needs to change.", 110),
    Memory("hm-m-tobiah-vipps", TOBIAH, LEARNING,
           "Vipps through Stripe Checkout needs the marina's Stripe account in Norway and NOK prices; "
           "Swedish marinas can't offer it.", 90),
    Memory("hm-m-tobiah-cancel-refund-percent", TOBIAH, LEARNING,
           "`refund_for()` returns a percentage of the deposit only; the berth fee itself is refunded "
           "by the marina by hand. Guests confuse the two in support mail.", 140),
    Memory("hm-m-tobiah-update-waffle", TOBIAH, UPDATE,
           "📌 2026-08-20 — Removed flags `hm_new_checkout` and `hm_berth_map_v2`; both were on for "
           "everyone since June.", 98),
    Memory("hm-m-tobiah-admin-actions", TOBIAH, LEARNING,
           "Admin actions that write (\"mark arrived\", \"cancel booking\") must call the service "
           "functions too; the `cancel` admin action once skipped `refund_for` and the job clean-up.", 66),
    Memory("hm-m-tobiah-photos", TOBIAH, LEARNING,
           "Pillow needs `libjpeg` and `libwebp` in the image; the slim base image had neither and "
           "uploads failed with `OSError: decoder jpeg not available`.", 68),
    # --- Maëlle (Frontend) ---
    Memory("hm-m-maelle-role", MAELLE, CORE,
           "**My role:** Frontend. Templates, HTMX, CSS, translations and accessibility.", 270),
    Memory("hm-m-maelle-plain-css", MAELLE, PATTERN,
           "CSS is plain, with custom properties in `static/css/tokens.css` (`--hm-blue-700`, "
           "`--hm-space-2`…). No Tailwind, no Sass.", 245),
    Memory("hm-m-maelle-hx-boost", MAELLE, LEARNING,
           "**hx-boost and Stripe:** with `hx-boost` on the body, the \"Pay deposit\" button's redirect "
           "to Stripe Checkout was swallowed (HTMX followed it as an AJAX request and nothing visible "
           "happened). Buttons and forms that leave the site carry `hx-boost=\"false\"`; the server "
           "answers HTMX requests with `HX-Redirect`.", 200),
    Memory("hm-m-maelle-makemessages", MAELLE, LEARNING,
           "**Translations:** `manage.py makemessages -l nb -l de --ignore=node_modules`; entries marked "
           "`#, fuzzy` are not compiled, so remove the flag once reviewed. Run `compilemessages` before "
           "looking at a page in German.", 220),
    Memory("hm-m-maelle-focus", MAELLE, LEARNING,
           "**Focus after a swap:** HTMX swaps the form and the focus goes back to `<body>`; screen "
           "readers start from the top. `hx-on::after-swap=\"focusFirstInvalid(this)\"` moves focus to "
           "the first field with `aria-invalid=\"true\"` and the error summary is `role=\"alert\"`.",
           135),
    Memory("hm-m-maelle-contrast", MAELLE, LEARNING,
           "**Colour contrast:** the harbour blue `#2b7bb9` on white is 4.0:1 and fails AA for body text "
           "and links; use `--hm-blue-700` (`#1d5a8a`, 7.1:1). The receipt template still had the old "
           "blue until HM-233.", 125),
    Memory("hm-m-maelle-number-format", MAELLE, LEARNING,
           "**Prices in Norwegian:** with `{% localize on %}` the total reads `1 250,00`; the JavaScript "
           "that sums extras parsed the text and got NaN. Read `data-amount-ore` from the element "
           "instead of its text.", 115),
    Memory("hm-m-maelle-date-input", MAELLE, LEARNING,
           "Native `<input type=\"date\">` for arrival and departure; it gives the phone's own picker. "
           "`min` is set from the server so past dates can't be picked.", 190),
    Memory("hm-m-maelle-berth-svg", MAELLE, LEARNING,
           "**Berth map:** an inline SVG rendered server-side (`berths/map.svg.html`); each berth is a "
           "`<g data-berth-id>`; a click swaps the side panel with `hx-get`. The SVG is loaded lazily "
           "below the fold.", 180),
    Memory("hm-m-maelle-print", MAELLE, LEARNING,
           "The receipt prints from `receipt.html` with `@media print`; browsers drop background colours, "
           "so the paid stamp is a border, not a fill.", 100),
    Memory("hm-m-maelle-update-de", MAELLE, UPDATE,
           "📌 2026-09-30 — German translation complete; Bokmål still missing the cancellation pages.",
           57),
    Memory("hm-m-maelle-icons", MAELLE, LEARNING,
           "Icons are an SVG sprite (`static/icons.svg`, `<use href=\"#anchor\">`); an icon-only button "
           "needs an `aria-label`, the sprite has no titles.", 85, source=AGENT),
    Memory("hm-m-maelle-dark", MAELLE, LEARNING,
           "Dark mode is `prefers-color-scheme` only, no toggle; the berth map colours are custom "
           "properties so both themes share the SVG.", 40),
    # --- Ruslan (DevOps) ---
    Memory("hm-m-ruslan-role", RUSLAN, CORE,
           "**My role:** DevOps. Kamal, the two Hetzner hosts (hel1-app-1, hel1-app-2), backups, CI and "
           "the handbook site.", 280),
    Memory("hm-m-ruslan-compose", RUSLAN, LEARNING,
           "Deploys: `ssh hel1-app-1 'cd /srv/hm && docker compose pull && docker compose up -d'`, then "
           "the same on hel1-app-2.", 278),
    Memory("hm-m-ruslan-compose-kamal", RUSLAN, LEARNING,
           "Deploys are `kamal deploy` from the release workflow; to go back one version, `kamal "
           "rollback <previous version>` (the versions are the image tags `kamal app images` lists).",
           118, corrects="hm-m-ruslan-compose"),
    Memory("hm-m-ruslan-handbook-rollback", RUSLAN, LEARNING,
           "**Going back to an older handbook:** the publish force-pushes `site/` to `gh-pages`, so the "
           "branch has no history to revert. Find the last good tag with `git tag -l 'handbook-*' "
           "--sort=-creatordate | head`, then `scripts/publish-handbook.sh --tag <that tag>`. GitHub "
           "Pages serves the old copy for up to 10 minutes afterwards; don't publish twice.", 90,
           source=AGENT, importance="high"),
    Memory("hm-m-ruslan-kamal-migrate", RUSLAN, LEARNING,
           "**Kamal and migrations:** the `pre-deploy` hook runs `manage.py migrate --check || manage.py "
           "migrate`; when a migration fails the new containers never start and the old ones keep "
           "serving. Fix forward; `kamal rollback` does not undo a migration that did run.", 110),
    Memory("hm-m-ruslan-healthcheck", RUSLAN, LEARNING,
           "**Zero-downtime deploys:** kamal-proxy switches traffic only when `/up` answers 200. `/up` "
           "must not touch the database: a 2-second PostgreSQL blip made every deploy time out.", 105,
           shared=True, source=INBOX),
    Memory("hm-m-ruslan-disk", RUSLAN, LEARNING,
           "**Disk full on hel1-app-2:** old images pile up (1.1 GB each). `kamal prune all` keeps the "
           "last 5; the nightly `docker image prune -af --filter until=168h` cron stays as a backstop. "
           "Check with `df -h /var/lib/docker`.", 75),
    Memory("hm-m-ruslan-restore", RUSLAN, LEARNING,
           "**Restore drill:** `pg_restore --no-owner --role=harbormaster -d hm_restore latest.dump`; the "
           "September drill took 14 minutes for 3.1 GB. Download the dump with `aws s3 cp "
           "s3://hm-backups-fsn1/…` (profile `hetzner`).", 60),
    Memory("hm-m-ruslan-ci-cache", RUSLAN, LEARNING,
           "**CI cache after a Python bump:** the uv cache is keyed on `uv.lock` only; after moving to "
           "3.12.6 CI restored 3.12.4 wheels and failed with `ImportError: _ctypes`. Bump "
           "`UV_CACHE_SUFFIX` in `.github/workflows/ci.yml` whenever the Python version changes.", 160),
    Memory("hm-m-ruslan-tls", RUSLAN, LEARNING,
           "Certificates come from kamal-proxy's Let's Encrypt integration; staging hits the rate limit "
           "if its hostname changes more than 5 times a week.", 100),
    Memory("hm-m-ruslan-secrets", RUSLAN, LEARNING,
           "**Secrets:** production and staging secrets (database URL and password, Stripe keys, "
           "Postmark token) live in the 1Password vault `Harbormaster Prod`; `kamal secrets fetch` reads "
           "them at deploy time. `.kamal/secrets` is git-ignored; never commit it.", 115, shared=True,
           source=INBOX),
    Memory("hm-m-ruslan-infra-changelog", RUSLAN, PATTERN,
           "Every change to a host gets a dated line in `infra/CHANGELOG.md`, even a one-off `apt "
           "upgrade`.", 200),
    Memory("hm-m-ruslan-object-storage", RUSLAN, UPDATE,
           "📌 2026-09-14 — Moved object storage from Wasabi to Hetzner Object Storage; the backup "
           "bucket is now `hm-backups-fsn1`.", 73),
    Memory("hm-m-ruslan-handbook-search", RUSLAN, LEARNING,
           "The handbook's search index is built by MkDocs at publish time; a page missing from search "
           "is a page missing from `nav:` in `handbook/mkdocs.yml`.", 88),
    Memory("hm-m-ruslan-uptime", RUSLAN, LEARNING,
           "Uptime checks (Better Stack) hit `/up` on both hosts every minute and page Ruslan after 3 "
           "failures; marinas' own Wi-Fi outages show up as support mail, not alerts.", 45),
    # --- Ingrid (Tester) ---
    Memory("hm-m-ingrid-role", INGRID, CORE,
           "**My role:** Tester. pytest, Playwright, factories, and triage of flaky tests.", 260),
    Memory("hm-m-ingrid-time-machine", INGRID, LEARNING,
           "**Freezing time:** use `time_machine.travel(datetime(…, tzinfo=ZoneInfo(\"Europe/Oslo\")), "
           "tick=False)`. freezegun broke with zoneinfo: the marina's zone came back as UTC and tests "
           "around the clock change passed on CI and failed locally.", 150),
    Memory("hm-m-ingrid-htmx-wait", INGRID, LEARNING,
           "**Playwright and HTMX:** never `wait_for_load_state(\"networkidle\")` after a swap (it waits "
           "for the lazy SVG forever). Wait until no element has the `htmx-request` class: "
           "`page.wait_for_function(\"!document.querySelector('.htmx-request')\")`, then assert.", 140,
           shared=True, source=INBOX),
    Memory("hm-m-ingrid-factories", INGRID, LEARNING,
           "**Factories:** `BookingFactory` needs a `Season` covering its nights or pricing raises "
           "`NoSeason`. Use `SeasonFactory.covering(period)`; for a stay across two seasons build both "
           "with `SeasonFactory.split(period, on=date)`.", 170),
    Memory("hm-m-ingrid-stripe-mock", INGRID, LEARNING,
           "**Stripe in tests:** CI runs `stripe-mock` on :12111; webhook tests sign their payloads with "
           "`tests/stripe_sig.py::signed(payload, secret)`. Never call the real test mode from CI.",
           180),
    Memory("hm-m-ingrid-flaky-map", INGRID, LEARNING,
           "**Flaky `test_berth_map_swaps`:** failed 1 run in 30 because the SVG is lazy; the test now "
           "waits for `[data-berth-id]` to count 48 before clicking.", 95),
    Memory("hm-m-ingrid-reuse-db", INGRID, LEARNING,
           "`pytest -n auto --reuse-db` fails after a branch changes migrations; CI uses `--create-db`, "
           "locally run it once with `--create-db`.", 120),
    Memory("hm-m-ingrid-regression-names", INGRID, PATTERN,
           "A bug fix comes with a regression test named for its ticket: `test_hm_212_refund_twice`.",
           210),
    Memory("hm-m-ingrid-coverage", INGRID, UPDATE,
           "📌 2026-10-02 — Coverage gate raised to 88 % for `bookings/` and `payments/`.", 55),
    Memory("hm-m-ingrid-po-test", INGRID, LEARNING,
           "`test_no_untranslated_nb` fails on an empty `msgstr`; compile messages before running the "
           "suite locally or the German page tests see English.", 80),
    Memory("hm-m-ingrid-email-tests", INGRID, LEARNING,
           "Email tests read `mail.outbox`; the Postmark backend is swapped for the locmem one in "
           "`config/test_settings.py`, so a template error shows up as a test failure, not a 422.", 65),
)

EPISODES = (
    Episode("hm-e-double-reminder", TOBIAH, FAILED,
            "Tried to stop guests getting the arrival reminder twice by adding a unique index on "
            "`jobs_job (booking_id, kind)`.",
            102, files=("jobs/models.py", "jobs/migrations/0012_unique_booking_kind.py"),
            difficulties="The index broke re-sending a reminder after a booking was moved. The real cause "
                         "was `claim_retry()` claiming without SKIP LOCKED, so two workers took the same "
                         "job.",
            feedback="Look at the claim queries in `jobs/worker.py` first next time."),
    Episode("hm-e-exclusion", TOBIAH, SUCCEEDED,
            "Added the `btree_gist` exclusion constraint on bookings and mapped its IntegrityError to a "
            "form error.", 210, files=("bookings/models.py", "bookings/forms.py")),
    Episode("hm-e-handbook-restore", RUSLAN, SUCCEEDED,
            "The handbook went blank after a publish from a branch with a broken `mkdocs.yml`. "
            "Re-published tag `handbook-20260910-2`; the site was back after the Pages cache expired.",
            76, files=("scripts/publish-handbook.sh",),
            difficulties="The first re-publish seemed not to work: GitHub Pages kept the empty copy for "
                         "eight minutes.",
            feedback="Wait ten minutes before publishing again; add a check that `site/index.html` is "
                     "not empty."),
    Episode("hm-e-flatpickr", MAELLE, ABANDONED,
            "Tried to replace the native date inputs on the booking form with flatpickr.",
            160, files=("static/js/booking.js", "templates/bookings/form.html"),
            difficulties="The bundle grew by 48 KB and keyboard users lost the calendar entirely.",
            feedback="Stay with the native input."),
    Episode("hm-e-quarantine", INGRID, SUCCEEDED,
            "Made `test_berth_map_swaps` wait for all berths before clicking; 200 CI runs without a "
            "failure.", 94, files=("tests/e2e/test_berth_map.py",)),
    Episode("hm-e-kamal-first", RUSLAN, FAILED,
            "First `kamal deploy` to hel1-app-2: the proxy never switched to the new container.",
            121, files=("config/deploy.yml", "core/views.py"),
            difficulties="`/up` ran a database query; during the deploy the connection pool was busy and "
                         "the check timed out.",
            feedback="Keep `/up` free of database work."),
)

SESSIONS = (
    Session("hm-s-deposits", TOBIAH, "Payments: deposits through Stripe Checkout",
            "Deposits are live for Marina Ålesund and Lysekil Gästhamn.\n"
            "Refunds go through refund_deposit(); HM-212 (refund left the booking marked paid) fixed.\n"
            "Webhook secrets documented per environment; stripe-mock runs in CI.",
            85, issues=("HM-212 refund state", "HM-219 Vipps for Norwegian marinas")),
    Session("hm-s-kamal", RUSLAN, "Move deploys to Kamal 2",
            "Both hosts run Kamal 2 behind kamal-proxy; the Compose files are deleted.\n"
            "/up no longer queries the database; rollbacks tested with kamal rollback.",
            60, issues=("HM-230 proxy timeout",)),
    Session("hm-s-translations", MAELLE, "German and Bokmål translations",
            "German complete; Bokmål missing the cancellation pages (HM-241).\n"
            "Prices now read data-amount-ore, so the Norwegian decimal comma no longer breaks totals.",
            30),
    Session("hm-s-pricing-2027", VESNA, "Season 2027 price lists",
            "", 5, issues=("HM-250 import 2027 seasons", "HM-252 early-booking discount")),
)

TASKS = (
    Task(RUSLAN, "Put the public handbook back to how it was before this morning's publish",
         ("hm-d-handbook", "hm-m-ruslan-handbook-rollback", "hm-e-handbook-restore")),
    Task(TOBIAH, "What should I call the branch for the receipt printing bug?",
         ("hm-d-branches",)),
    Task(TOBIAH, "Two workers picked up the same reminder last night and a guest got it twice",
         ("hm-m-tobiah-skip-locked", "hm-e-double-reminder", "hm-d-jobs-postgres")),
    Task(MAELLE, "Clicking the pay button on a boosted page does nothing",
         ("hm-m-maelle-hx-boost",)),
    Task(INGRID, "A browser test hangs forever after the side panel is replaced",
         ("hm-m-ingrid-htmx-wait",)),
    Task(RUSLAN, "The second production server is out of space again",
         ("hm-m-ruslan-disk",)),
    Task(TOBIAH, "A guest cancelled and got their money back but the booking still says deposit paid",
         ("hm-m-tobiah-refund-deposit", "hm-s-deposits")),
    Task(INGRID, "Tests around the March clock change pass on CI but fail on my laptop",
         ("hm-m-ingrid-time-machine",)),
    Task(MAELLE, "The extras total shows NaN for Norwegian users",
         ("hm-m-maelle-number-format",)),
    Task(VESNA, "A marina asks whether guests could buy diesel at the dock through us",
         ("hm-m-vesna-scope-creep",)),
    Task(TOBIAH, "Can we move to the newest Django release?",
         ("hm-d-django-lts",)),
    Task(RUSLAN, "Where does production get its database password from?",
         ("hm-m-ruslan-secrets",)),
    Task(INGRID, "Write a test for a week-long stay that starts in spring prices and ends in summer prices",
         ("hm-m-ingrid-factories", "hm-m-tobiah-half-open", "hm-d-seasons")),
    Task(MAELLE, "Screen reader users lose their place after submitting a form with a mistake",
         ("hm-m-maelle-focus", "hm-d-wcag")),
    Task(TOBIAH, "Email guests the day before they arrive",
         ("hm-d-reminders-jobs", "hm-m-tobiah-dst", "hm-d-postmark")),
    Task(RUSLAN, "How long do we keep the nightly copies of the database?",
         ("hm-d-backups",)),
    Task(INGRID, "Can an agent approve a pull request that only changes templates?",
         ("hm-d-reviews",)),
    Task(TOBIAH, "What number does the next release get?",
         ("hm-d-calver",)),
    Task(RUSLAN, "Ship the new build to production without dropping requests",
         ("hm-d-kamal", "hm-m-ruslan-healthcheck", "hm-m-ruslan-kamal-migrate")),
    Task(RUSLAN, "CI fails with ImportError _ctypes since we bumped the interpreter",
         ("hm-m-ruslan-ci-cache",)),
    Task(MAELLE, "The links on the printed receipt are hard to read",
         ("hm-m-maelle-contrast",)),
    Task(TOBIAH, "Error reports show guests' email addresses",
         ("hm-d-sentry",)),
    Task(VESNA, "Where did we end up with taking deposits?",
         ("hm-s-deposits", "hm-d-stripe-checkout")),
    Task(INGRID, "Which tool should the end-to-end tests for the kiosk screens use?",
         ("hm-d-playwright",)),
    Task(TOBIAH, "Someone stole the tablet at the harbour office",
         ("hm-m-tobiah-kiosk-tokens", "hm-d-kiosk-api")),
)
# fmt: on

TEAM = Team("harbormaster", "Harbormaster", DECISIONS, MEMORIES, EPISODES, SESSIONS, TASKS)
