"""A software team's memories, and the tasks that should find them: the fixed set the relevance check
measures retrieval on.

Six agents of one team (backend, infrastructure, frontend, tests and data, mobile, security) wrote
these the way agents do: build, test and deploy gotchas, what the codebase does, who prefers what, the
mistakes that keep coming back. Many memories share words with tasks they do not answer (other
webhooks, other retries, other caches); a few are archived or private to another agent, and must
never be returned.

Each task is phrased the way work is handed out, not in its memory's words. `expected` lists the
memories that answer it; retrieval hits when any of them is in its top five.
"""

# The memories are written as people write: en dashes and multiplication signs stay.
# ruff: noqa: RUF001

from __future__ import annotations

from typing import NamedTuple

PRIYA = "Priya"  # backend: billing, the API
KENJI = "Kenji"  # infrastructure: Kubernetes, Terraform, CI
ZOE = "Zoë"  # frontend
TOMAS = "Tomás"  # tests and data
LUKASZ = "Łukasz"  # mobile and releases
AMARA = "Amara"  # security and docs

LEARNING, PATTERN, CORE, UPDATE = "learning", "pattern", "core_context", "update"
HIGH, MEDIUM, LOW = "high", "medium", "low"
CROSS = "cross-team"


class Memory(NamedTuple):
    key: str
    agent: str
    type: str
    importance: str
    tags: str
    content: str
    archived: bool = False


class Task(NamedTuple):
    agent: str
    text: str
    expected: tuple[str, ...]


# fmt: off
MEMORIES: tuple[Memory, ...] = (
    # --- Billing and the API (Priya) ---
    Memory("billing-webhook-retries", PRIYA, LEARNING, HIGH, "billing,webhooks,stripe",
           "The billing service retries Stripe webhooks 5 times with exponential backoff (1s, 4s, 16s, "
           "64s, 256s); after that the event lands in `billing_dead_letter` and nobody is paged. Check "
           "that table first when a customer says an invoice never got marked paid."),
    Memory("billing-webhook-retries-old", PRIYA, LEARNING, MEDIUM, "billing,webhooks",
           "Billing webhooks are retried 3 times and then dropped; an invoice stuck unpaid after a "
           "Stripe charge means the webhook was lost.", archived=True),
    Memory("billing-idempotency", PRIYA, PATTERN, HIGH, "billing,webhooks",
           "Every handler in billing/webhooks/ must be idempotent: Stripe re-sends the same event id on "
           "timeouts. We key on `event.id` in `ProcessedEvent` (unique constraint); don't dedupe on the "
           "invoice number."),
    Memory("billing-minor-units", PRIYA, LEARNING, HIGH, "billing,money",
           "Amounts in billing are integer minor units (cents). Never use float; `Money.from_decimal()` "
           "rounds half-even. JPY and KRW have zero decimals, BHD has three."),
    Memory("billing-proration", PRIYA, CORE, MEDIUM, "billing,stripe",
           "Proration on plan downgrade is computed by Stripe, not us: we only display "
           "`upcoming_invoice.lines`. Don't reimplement it."),
    Memory("invoice-pdf-fonts", PRIYA, LEARNING, MEDIUM, "billing,pdf",
           "Invoice PDFs are rendered by WeasyPrint in the `pdf-worker` queue; fonts must be installed in "
           "the image (Noto Sans CJK for Japanese customers) or the characters come out as tofu boxes."),
    Memory("tax-rates", PRIYA, CORE, MEDIUM, "billing,tax",
           "Tax rates come from `billing/tax/rates_2024.csv`, loaded at startup; a change needs a deploy, "
           "not a migration. EU VAT reverse-charge applies when `customer.vat_id` is set and country != IE."),
    Memory("refund-approval", PRIYA, CORE, HIGH, "billing,refunds",
           "Refunds over €500 need a second approver in the admin (`RefundApproval`); the API refuses them "
           "with 403 `refund_requires_approval`."),
    Memory("refund-rounding", PRIYA, LEARNING, HIGH, "billing,refunds",
           "Partial refunds on discounted orders were off by a cent (ACME-1423): the discount is allocated "
           "per line by largest remainder, and refunds must use the same allocation (`allocate_discount()`)."),
    Memory("dunning", PRIYA, LEARNING, MEDIUM, "billing,stripe",
           "Failed subscription payments: Stripe Smart Retries try 4 times over 3 weeks, then the "
           "subscription goes `past_due` → `canceled`; our `DunningEmail` schedule mirrors those dates."),
    Memory("stripe-api-version", PRIYA, LEARNING, HIGH, "billing,stripe",
           "The Stripe API version is pinned to `2023-10-16` in `billing/stripe_client.py`; the webhook "
           "endpoint's version in the Stripe dashboard must match or payload shapes differ."),
    Memory("cursor-pagination", PRIYA, PATTERN, HIGH, "api,performance",
           "List endpoints use cursor pagination (`?cursor=`), never offset: the orders table is 40M rows "
           "and OFFSET 200000 took 9s in prod."),
    Memory("api-dated-versions", PRIYA, CORE, HIGH, "api",
           "Public API versions are dated (`2024-06-01`) and pinned per API key; breaking changes go behind "
           "a new version date, registered in `api/versions.py`."),
    Memory("n-plus-one", PRIYA, LEARNING, MEDIUM, "api,performance,mistake",
           "I keep writing N+1 queries in serializers: `OrderSerializer.get_items` hits the DB per row. "
           "Use `prefetch_related('items__product')` in the viewset's `get_queryset` and pin the count "
           "with `assertNumQueries`."),
    Memory("django-upgrade", PRIYA, UPDATE, MEDIUM, "django",
           "Django 4.2 → 5.2 upgrade notes: `DEFAULT_AUTO_FIELD` was already set; `index_together` is gone "
           "so migration 0087 had to be squashed; `assertFormError` changed its signature."),
    Memory("rate-limit-nginx", PRIYA, LEARNING, MEDIUM, "api,nginx," + CROSS,
           "The public API rate limit is 600 requests/minute per key, enforced in nginx "
           "(`limit_req zone=apikey`), not in Django. 429s in the logs with no Django trace come from nginx."),
    Memory("schedules-dst", PRIYA, LEARNING, HIGH, "time",
           "All timestamps are stored UTC; `Account.timezone` is only for display. Schedules "
           "(`ReportSchedule`) run in the account's zone and DST shifts them: there was a double send on "
           "2024-03-31 in Europe/Berlin."),
    Memory("celery-autoretry", PRIYA, PATTERN, HIGH, "celery",
           "Celery tasks in `notifications/` use `autoretry_for=(SMTPException,)` with `max_retries=3`; "
           "never retry payment capture tasks automatically: double charge risk."),
    Memory("mjml-emails", PRIYA, LEARNING, MEDIUM, "email,build",
           "Transactional emails are MJML in `templates/email/*.mjml`, compiled at build time by "
           "`npm run emails`; edits to the generated .html are lost on the next build."),
    Memory("autoreload-mjml", PRIYA, LEARNING, LOW, "email,dev",
           "runserver's autoreload doesn't notice edits to `templates/email/*.mjml`, they're compiled; "
           "rerun `npm run emails` and refresh."),
    Memory("outgoing-webhooks", PRIYA, LEARNING, MEDIUM, "webhooks,api",
           "Outgoing webhooks (the ones we send to customers) are signed with HMAC-SHA256 in the header "
           "`X-Acme-Signature`; customers verify with their endpoint secret. Not the same as Stripe's."),
    Memory("http-client-retries", PRIYA, PATTERN, MEDIUM, "http," + CROSS,
           "The shared `http_client()` retries GET requests 3 times on 502/503/504 with jitter; POSTs are "
           "never retried unless you pass an `Idempotency-Key`."),
    Memory("shopify-webhooks", PRIYA, LEARNING, HIGH, "shopify,webhooks,integrations",
           "Shopify webhooks must be answered within 5 s or Shopify retries up to 19 times over 48 h and "
           "then deletes the subscription; we enqueue and return 200 immediately."),
    Memory("stock-oversell", PRIYA, LEARNING, HIGH, "checkout,database",
           "Stock reservation uses `select_for_update(skip_locked=True)` on `StockItem` so two checkouts "
           "don't oversell; without it we sold the same last item twice on Black Friday 2023."),
    Memory("service-functions", PRIYA, CORE, MEDIUM, "style,review",
           "Priya prefers explicit service functions (`order_cancel(order=…, by=…)`) over model methods "
           "for anything that writes; fat models get pushback in review."),
    Memory("glossary", PRIYA, CORE, HIGH, "domain," + CROSS,
           "Glossary: an 'account' is the paying company, a 'user' a person in it, a 'customer' the "
           "account's own end customer. Orders belong to customers, not to users."),
    Memory("nfc-names", PRIYA, LEARNING, MEDIUM, "unicode,search",
           "Customer names with combining characters ('José' typed as J-o-s-e-U+0301) didn't match in "
           "search; we NFC-normalize on save since migration 0142."),
    Memory("sse-orders", PRIYA, LEARNING, MEDIUM, "asgi,realtime",
           "Live order status uses Server-Sent Events from `/events/orders`, served by the ASGI app under "
           "uvicorn; gunicorn sync workers can't hold SSE connections open."),
    Memory("monthly-reports", PRIYA, LEARNING, MEDIUM, "reports,time",
           "Monthly account reports are generated on the 1st at 06:00 in each account's timezone by "
           "`generate_monthly_reports`; the job is idempotent per (account, month)."),
    Memory("csv-export-bom", PRIYA, LEARNING, MEDIUM, "exports",
           "CSV exports over 10k rows run in the background and are emailed as a link; Excel mangles "
           "UTF-8 without a BOM, so the writer adds `\\ufeff` first."),
    Memory("customer-import", PRIYA, LEARNING, MEDIUM, "imports",
           "Bulk customer import takes CSV up to 50k rows; the importer validates the whole file first and "
           "reports every error with its line number, then writes in batches of 1000."),
    Memory("bulk-create-audit", PRIYA, LEARNING, MEDIUM, "django,database",
           "`bulk_create` skips `save()` and signals: the `search_vector` trigger still runs, but the audit "
           "log gets no entry. Use it for imports only."),
    Memory("trigram-search", PRIYA, LEARNING, HIGH, "search,postgres,performance",
           "The customer search page was slow because `ILIKE '%term%'` can't use a btree index; we added a "
           "pg_trgm GIN index on `customer.name`. Terms under 3 characters skip it."),
    Memory("product-cache-key", PRIYA, PATTERN, MEDIUM, "cache," + CROSS,
           "Product pages are cached 10 min under `product:{id}:v3`; bump the `v3` suffix when the "
           "template changes shape instead of flushing the whole cache."),
    Memory("celery-queues", PRIYA, LEARNING, MEDIUM, "celery",
           "Celery queues: `default`, `pdf`, `emails`, `priority`. A task without `queue=` lands in "
           "`default` and waits behind bulk imports."),
    Memory("shopify-sync", PRIYA, LEARNING, LOW, "shopify,integrations",
           "Inventory syncs from the Shopify integration every 15 min; the 'Sync now' button calls the "
           "same task with `priority=high`."),
    Memory("checkout-flag-rollout", PRIYA, UPDATE, MEDIUM, "checkout,flags," + CROSS,
           "Update: the new checkout flow (`new-checkout-flow` flag) is at 30% rollout; bug reports that "
           "mention 'Continue to payment' come from the new flow."),
    Memory("payments-ownership", PRIYA, UPDATE, MEDIUM, "billing,teams," + CROSS,
           "Update 2024-05-14: the payments team now owns `billing/`, webhooks included; route billing "
           "bugs to them, not to us."),
    Memory("explain-analyze", PRIYA, LEARNING, LOW, "database,performance",
           "To see a plan from Django: `print(qs.explain(analyze=True))`. On a replica only: ANALYZE runs "
           "the query for real."),

    # --- Infrastructure (Kenji) ---
    Memory("no-friday-deploys", KENJI, CORE, MEDIUM, "deploy,process," + CROSS,
           "No production deploys after 15:00 on Fridays; on-call hands over at 17:00 and nobody wants to "
           "debug a rollback during handover."),
    Memory("migrations-job", KENJI, LEARNING, HIGH, "deploy,migrations,postgres," + CROSS,
           "Migrations run as a Kubernetes Job (`migrate-job`) before the new ReplicaSet rolls out; a "
           "migration that locks a big table stalls the deploy for everyone. Use `CREATE INDEX "
           "CONCURRENTLY` (an `atomic = False` migration) on tables over 1M rows."),
    Memory("terraform-lock", KENJI, LEARNING, HIGH, "terraform,ci",
           "Terraform state lives in the `acme-tfstate` S3 bucket with DynamoDB locking; if `terraform "
           "apply` hangs on 'Acquiring state lock', look for a stale lock from a cancelled CI job before "
           "running `force-unlock`."),
    Memory("helm-prod-values", KENJI, LEARNING, MEDIUM, "helm,kubernetes",
           "Helm values for staging and prod differ on purpose: prod has `replicaCount: 6` and a "
           "PodDisruptionBudget with minAvailable 4. Never copy staging's values file over prod's."),
    Memory("rollback-runbook", KENJI, CORE, HIGH, "deploy,incidents," + CROSS,
           "Rollback = `kubectl rollout undo deploy/web -n prod`, but migrations are not reversed: "
           "forward-fix the schema instead. Runbook: docs/runbooks/rollback.md."),
    Memory("external-secrets", KENJI, LEARNING, HIGH, "secrets,kubernetes," + CROSS,
           "Secrets come from AWS Secrets Manager through external-secrets; a new key needs an entry in "
           "`deploy/externalsecret.yaml`, or the pod starts with it unset and crashes on `KeyError`."),
    Memory("ci-pip-cache", KENJI, LEARNING, MEDIUM, "ci,python",
           "The GitHub Actions pip cache is keyed on the hash of `requirements/*.txt`; after changing only "
           "`pyproject.toml` CI installs the old pins. Bump `CACHE_VERSION` in .github/workflows/ci.yml."),
    Memory("image-size", KENJI, LEARNING, MEDIUM, "docker,build",
           "The web image went from 410 MB to 1.3 GB when someone added `build-essential` to the runtime "
           "stage. Compile wheels in the builder stage only."),
    Memory("dns-ttl", KENJI, LEARNING, LOW, "dns,aws",
           "Route 53 records for api.acme.io have TTL 300; lower it to 60 a day before any cutover."),
    Memory("pg-connection-budget", KENJI, LEARNING, HIGH, "postgres,pgbouncer," + CROSS,
           "Postgres max_connections is 200 on the RDS instance; 6 web pods × 4 gunicorn workers × pool "
           "of 5 is 120 before Celery. PgBouncer runs in transaction mode in front of prod: server-side "
           "cursors and `SET` statements don't survive it."),
    Memory("paging-policy", KENJI, CORE, MEDIUM, "alerts,oncall",
           "PagerDuty pages only on SLO burn (5xx ratio > 2% for 10 min); everything else goes to "
           "#alerts-noise. Talk to Kenji before adding any paging alert."),
    Memory("log-retention", KENJI, LEARNING, LOW, "logs,aws," + CROSS,
           "Logs are kept 14 days in Loki and 90 days in S3 Glacier. Older request logs for an incident "
           "need a Glacier restore, which takes about 12 h."),
    Memory("redis-dbs", KENJI, LEARNING, HIGH, "redis,cache,celery," + CROSS,
           "Redis is both the cache (DB 0) and the Celery broker (DB 1). `cache.clear()` in a shell "
           "empties DB 0 only, but `FLUSHALL` in redis-cli throws away every queued task."),
    Memory("preview-envs", KENJI, LEARNING, HIGH, "preview,ci," + CROSS,
           "Every PR gets a preview environment at `pr-<number>.preview.acme.dev`, destroyed on merge. It "
           "shares the staging database, so never run destructive migrations there."),
    Memory("staging-refresh", KENJI, LEARNING, MEDIUM, "staging,database," + CROSS,
           "The staging DB is refreshed from an anonymized prod snapshot every Sunday 03:00 UTC; anything "
           "put into staging by hand is gone on Monday."),
    Memory("kenji-plans", KENJI, CORE, MEDIUM, "review,terraform," + CROSS,
           "Kenji wants the terraform plan pasted in the PR description for any infra change, and rejects "
           "PRs whose plan shows an unexpected destroy."),
    Memory("cronjobs", KENJI, PATTERN, MEDIUM, "kubernetes,cron," + CROSS,
           "Scheduled jobs are Kubernetes CronJobs in `deploy/cron/`, not Celery beat (removed in 2024). "
           "Use `concurrencyPolicy: Forbid` for anything that writes."),
    Memory("gunicorn-max-requests", KENJI, LEARNING, MEDIUM, "gunicorn,web",
           "Prod runs gunicorn with `uvicorn.workers.UvicornWorker`, 4 workers per pod, and "
           "`--max-requests 1000` with jitter because of a slow leak in the PDF preview."),
    Memory("pdf-preview-leak", KENJI, LEARNING, HIGH, "web,incidents",
           "Web pods' RSS grows about 50 MB/h: `pdf_preview` keeps WeasyPrint documents in an `lru_cache`. "
           "Fix pending; until then gunicorn --max-requests recycles the workers."),
    Memory("cert-manager-dns01", KENJI, LEARNING, MEDIUM, "tls,kubernetes",
           "TLS certificates come from cert-manager with Let's Encrypt; the wildcard for *.preview.acme.dev "
           "uses DNS-01 through Route 53 and broke when the IAM policy lost "
           "`route53:ChangeResourceRecordSets`."),
    Memory("sentry-releases", KENJI, LEARNING, MEDIUM, "sentry,deploy," + CROSS,
           "Errors go to the Sentry project `acme-web`; the `release` tag is the git SHA set by the deploy "
           "job. Source maps are uploaded for the frontend in prod builds only."),
    Memory("sentry-disallowedhost", KENJI, LEARNING, LOW, "sentry",
           "`DisallowedHost` errors in Sentry are bots scanning our IPs; `before_send` drops them. Not "
           "worth a ticket."),
    Memory("k6-prod", KENJI, LEARNING, MEDIUM, "performance,mistake",
           "Never point k6 at prod: the WAF blocked the office IP for a whole day in January."),
    Memory("perf-budget", KENJI, LEARNING, LOW, "performance",
           "API p95 budget is 300 ms; the k6 script `perf/checkout.js` runs nightly against staging and "
           "posts to #perf."),
    Memory("python-312", KENJI, UPDATE, HIGH, "python," + CROSS,
           "Update: every service runs Python 3.12 now except `pdf-worker` (3.11, WeasyPrint wheels lag). "
           "No 3.12-only syntax in shared libraries yet."),
    Memory("postgres-16", KENJI, UPDATE, MEDIUM, "postgres,aws," + CROSS,
           "Update: RDS Postgres went from 14 to 16 on 2024-04-20. A `pg_dump` 14 client can't dump a 16 "
           "server; use the client in the `tools` image."),
    Memory("oncall-shifts", KENJI, UPDATE, LOW, "oncall," + CROSS,
           "Update: on-call moved from weekly to 3.5-day shifts in June; handovers Monday 10:00 and "
           "Thursday 17:00."),
    Memory("compose-apple-silicon", KENJI, LEARNING, MEDIUM, "dev,docker," + CROSS,
           "Local dev is `docker compose up`; on Apple Silicon the `pdf-worker` image needs "
           "`platform: linux/amd64` and is slow. `make dev-lite` leaves it out."),
    Memory("kenji-deploy-private", KENJI, LEARNING, MEDIUM, "deploy,kubernetes",
           "Deploying the web app: `make deploy ENV=prod` pushes the image and bumps the Helm release; the "
           "old ReplicaSet stays for 10 min so `rollout undo` is instant."),

    # --- Frontend (Zoë) ---
    Memory("tanstack-gctime", ZOE, LEARNING, MEDIUM, "react,frontend",
           "We use TanStack Query v5 for server state; `cacheTime` was renamed `gcTime` in v5, and most "
           "examples on the web still use the old name."),
    Memory("css-modules", ZOE, CORE, MEDIUM, "css,frontend",
           "Styles are CSS Modules (`*.module.css`); global class names only in `src/styles/globals.css`. "
           "Tailwind was tried in 2023 and removed."),
    Memory("aria-labels", ZOE, PATTERN, HIGH, "a11y,frontend," + CROSS,
           "Every icon-only button needs an `aria-label`; the axe check in CI (`npm run test:a11y`) fails "
           "the build otherwise."),
    Memory("i18n-fallback", ZOE, LEARNING, MEDIUM, "i18n,frontend",
           "UI strings go through `t('key')` from i18next; keys live in "
           "`public/locales/{en,de,ja}/common.json`. Missing German keys fall back to English silently: "
           "run `npm run i18n:check`."),
    Memory("storybook-server-imports", ZOE, LEARNING, LOW, "storybook,frontend",
           "Storybook 8 builds break when a story imports from `src/server/*` (node-only modules). Keep "
           "stories on presentational components."),
    Memory("bundle-budget", ZOE, LEARNING, MEDIUM, "performance,frontend",
           "The dashboard bundle budget is 250 kB gzipped, enforced by size-limit in CI. moment.js alone was "
           "70 kB; we switched to date-fns."),
    Memory("vite-env-prefix", ZOE, LEARNING, HIGH, "vite,frontend",
           "Vite only exposes env vars prefixed `VITE_`; `process.env.API_URL` is undefined in the browser "
           "build. Use `import.meta.env.VITE_API_URL`."),
    Memory("playwright-networkidle", ZOE, LEARNING, HIGH, "e2e,playwright,ci," + CROSS,
           "Playwright e2e tests flake on CI when they wait for `networkidle`: the dashboard polls every 5s "
           "so it never goes idle. Wait for a locator instead."),
    Memory("zoe-small-prs", ZOE, CORE, LOW, "review," + CROSS,
           "Zoë prefers small PRs (under 300 lines) with screenshots for any visual change; she won't "
           "review a UI PR without a before/after."),
    Memory("launchdarkly-flags", ZOE, PATTERN, MEDIUM, "flags," + CROSS,
           "Feature flags live in LaunchDarkly; keys are kebab-case (`new-checkout-flow`). Remove the flag "
           "and its dead branch within two sprints of reaching 100%."),
    Memory("zod-schemas", ZOE, PATTERN, MEDIUM, "forms,frontend",
           "Checkout form validation uses zod schemas shared with the API client "
           "(`src/schemas/checkout.ts`); don't repeat the rules in the component."),
    Memory("color-tokens", ZOE, LEARNING, LOW, "css,frontend",
           "Dark mode colors are CSS variables in `tokens.css`; hard-coded hex colors fail the stylelint "
           "rule `color-no-hex`."),
    Memory("contrast-orange", ZOE, LEARNING, MEDIUM, "a11y,design",
           "Text contrast must be at least 4.5:1; the brand orange #FF7A00 on white fails it, so use "
           "`--color-brand-strong` for text."),
    Memory("cloudfront-invalidation", ZOE, LEARNING, MEDIUM, "deploy,frontend,aws",
           "Frontend deploys are separate: the `web-static` job uploads to S3 and invalidates `/*` in "
           "CloudFront. Invalidations take 5–10 min, so a fix that was just deployed may not show yet."),
    Memory("index-html-cache", ZOE, LEARNING, MEDIUM, "cache,frontend",
           "index.html is served with `Cache-Control: no-cache`, hashed assets for a year; when users "
           "still see an old app, the culprit is a proxy that cached index.html."),
    Memory("node-20", ZOE, UPDATE, MEDIUM, "node,frontend," + CROSS,
           "Update: Node 20 LTS is the baseline for frontend builds (`.nvmrc` says 20.11). Node 18 builds "
           "fail on `structuredClone` in vitest."),
    Memory("monorepo-move", ZOE, UPDATE, LOW, "frontend,repo," + CROSS,
           "Update: the frontend moved into the monorepo under `apps/web/`; the old `acme-web` repo is "
           "archived and its open PRs need re-creating."),
    Memory("react-memo-mistake", ZOE, LEARNING, LOW, "react,mistake",
           "I wrap everything in `useMemo` out of habit; profiling showed it made the order table slower. "
           "Measure with the React Profiler first."),
    Memory("image-uploads", ZOE, LEARNING, MEDIUM, "uploads,aws",
           "User uploads go straight to S3 through a presigned POST (max 10 MB); the API only stores the "
           "key. Thumbnails come from a Lambda about 2 s later, so the UI shows a placeholder."),

    # --- Tests and data (Tomás) ---
    Memory("django-db-mark", TOMAS, LEARNING, MEDIUM, "pytest,tests",
           "Tests that touch the DB need `@pytest.mark.django_db`; use `transaction=True` only when the "
           "code under test relies on `on_commit`, it is ten times slower."),
    Memory("factory-boy", TOMAS, PATTERN, MEDIUM, "tests,fixtures," + CROSS,
           "Build test objects with the factory_boy factories in `tests/factories.py`, not JSON fixtures: "
           "`OrderFactory` creates the customer and products it needs. The old `fixtures/*.json` are "
           "frozen and will be deleted."),
    Memory("time-machine", TOMAS, LEARNING, MEDIUM, "tests,time",
           "Time-dependent tests use `time_machine`, not freezegun: freezegun doesn't patch `datetime` "
           "inside C extensions (pendulum) and the report tests passed by accident."),
    Memory("xdist-tmp", TOMAS, LEARNING, HIGH, "pytest,ci," + CROSS,
           "The suite runs with `pytest -n auto` (xdist); tests that write to `/tmp/exports/` collide "
           "between workers. Use the `tmp_path` fixture."),
    Memory("diff-cover", TOMAS, LEARNING, LOW, "ci,coverage",
           "The coverage gate is 85% of changed lines (diff-cover), not of the total; a PR that only moves "
           "code can still fail it."),
    Memory("data-migrations", TOMAS, PATTERN, HIGH, "migrations,django," + CROSS,
           "Data migrations must use `apps.get_model()`, never import the model: the historical model is "
           "the one that matches the schema at that point."),
    Memory("backfills", TOMAS, LEARNING, HIGH, "database,migrations," + CROSS,
           "Backfills over 100k rows go in a management command with `--batch-size` and `--sleep`, not in "
           "a migration; the `orders` backfill in March held up replication for 40 min."),
    Memory("syrupy-snapshots", TOMAS, LEARNING, MEDIUM, "tests,pdf",
           "Snapshot tests (syrupy) cover the PDF text: run `pytest --snapshot-update` only after reading "
           "the diff; twice we committed a snapshot of an error page."),
    Memory("make-seed", TOMAS, LEARNING, LOW, "dev,data",
           "`make seed` loads demo data for local dev: 3 accounts, 200 orders. It refuses to run when "
           "`DJANGO_ENV=production`."),
    Memory("makemigrations-check", TOMAS, LEARNING, LOW, "migrations,mistake",
           "I keep forgetting `makemigrations --check` before pushing; CI catches it but it costs a round "
           "trip. It's in the pre-commit hook now."),
    Memory("analytics-events", TOMAS, LEARNING, MEDIUM, "analytics," + CROSS,
           "Analytics events are defined in `analytics/events.yaml` and types are generated from it; an "
           "event missing from the YAML is dropped silently by Segment's schema enforcement."),
    Memory("dbt-nightly", TOMAS, CORE, MEDIUM, "analytics,warehouse," + CROSS,
           "The warehouse is Snowflake, modelled with dbt in the `analytics-dbt` repo. `fct_orders` is "
           "rebuilt nightly at 02:00 UTC, so today's numbers are always incomplete."),
    Memory("ci-reruns", TOMAS, PATTERN, MEDIUM, "ci,e2e," + CROSS,
           "CI reruns failed tests once (`pytest --reruns 1`) in the `e2e` job only; a test that needed the "
           "rerun goes into `FLAKY.md` and gets fixed within a sprint."),
    Memory("emoji-export", TOMAS, LEARNING, LOW, "exports,unicode",
           "Emoji in order notes (😀) broke the legacy MySQL export: utf8 isn't utf8mb4. The export strips "
           "astral characters now."),
    Memory("hypothesis-profile", TOMAS, LEARNING, LOW, "tests",
           "Hypothesis runs 100 examples locally and 1000 in the nightly job (`HYPOTHESIS_PROFILE=ci`); a "
           "failure prints the `@reproduce_failure` line to paste."),
    Memory("test-settings", TOMAS, CORE, MEDIUM, "tests,django",
           "Tests use `config/settings/test.py`: MD5 password hasher, locmem cache, Celery eager. A test "
           "that needs the real broker is marked `@pytest.mark.integration`."),

    # --- Mobile and releases (Łukasz) ---
    Memory("app-store-review", LUKASZ, LEARNING, MEDIUM, "ios,release",
           "App Store review takes 24–48 h; submit release builds by Tuesday for a Thursday launch. Phased "
           "release is on by default (7 days)."),
    Memory("android-upload-key", LUKASZ, LEARNING, HIGH, "android,release",
           "Android release builds are signed by Play App Signing; the upload key is in 1Password as "
           "'Android upload keystore'. Losing it means a ticket with Google, not the end of the world."),
    Memory("min-app-version", LUKASZ, CORE, HIGH, "mobile,api," + CROSS,
           "Mobile version strings are `major.minor.patch`, the build number is the CI run number; the API "
           "reads `X-App-Version` and refuses anything below `MIN_SUPPORTED_APP_VERSION = 4.12.0`."),
    Memory("apns-expiry", LUKASZ, LEARNING, HIGH, "mobile,push",
           "Push goes through Firebase Cloud Messaging on both platforms; the APNs certificate expired once "
           "(2024-02) and iOS push silently stopped for 3 days. The expiry date is in the team calendar."),
    Memory("universal-links", LUKASZ, LEARNING, MEDIUM, "mobile,ios,android",
           "Deep links use `acme://` on Android and universal links on iOS; `apple-app-site-association` "
           "is served by the web app under `/.well-known/` and must be JSON without a .json extension."),
    Memory("rn-upgrade", LUKASZ, LEARNING, MEDIUM, "mobile,react-native",
           "The mobile app is React Native 0.73 with Hermes; apply the upgrade-helper diff by hand, because "
           "`npx react-native upgrade` broke the Podfile twice."),
    Memory("changelog", LUKASZ, PATTERN, LOW, "release," + CROSS,
           "Release notes go in CHANGELOG.md under 'Unreleased' (Keep a Changelog format); the release "
           "script moves them under the version heading."),
    Memory("ui-semver", LUKASZ, PATTERN, MEDIUM, "libraries," + CROSS,
           "The shared `@acme/ui` package follows semver strictly: removing a prop is a major bump even if "
           "nobody uses it."),
    Memory("never-remove-fields", LUKASZ, PATTERN, HIGH, "mobile,api," + CROSS,
           "Never remove a field from an API response the mobile app reads: old app versions live for "
           "months. Deprecate it in the schema and keep it until MIN_SUPPORTED_APP_VERSION is past it."),
    Memory("lukasz-rc-builds", LUKASZ, CORE, LOW, "release,qa," + CROSS,
           "Łukasz wants a QA build on TestFlight / Firebase App Distribution for every release candidate; "
           "testers are in the 'RC testers' group."),
    Memory("no-graphql", LUKASZ, CORE, LOW, "api,mobile," + CROSS,
           "There is no GraphQL: the mobile app uses the same REST API as the web. A GraphQL spike in 2023 "
           "was dropped (ADR 0031)."),
    Memory("ios-privacy-manifest", LUKASZ, UPDATE, MEDIUM, "ios,release",
           "Update: since May 2024 App Store uploads without a `PrivacyInfo.xcprivacy` manifest are "
           "rejected; the Sentry and Firebase SDKs were bumped for theirs."),

    # --- Security and docs (Amara) ---
    Memory("jwt-rotation", AMARA, CORE, HIGH, "auth,security," + CROSS,
           "Access tokens are JWTs valid for 15 min; refresh tokens last 30 days and rotate on every use. "
           "Reusing a rotated refresh token revokes the whole token family, which logs the user out."),
    Memory("no-pii-logs", AMARA, LEARNING, HIGH, "security,logs," + CROSS,
           "Never log request bodies in `accounts/` or `billing/`: they hold emails and card "
           "fingerprints. The `RedactingFilter` in the logging config only knows the keys we listed."),
    Memory("audit-ignore", AMARA, PATTERN, MEDIUM, "security,dependencies",
           "`pip-audit` and `npm audit --omit=dev` run nightly; a high finding opens a ticket by itself. "
           "Don't silence one without a comment in `.audit-ignore` saying why."),
    Memory("csp-widgets", AMARA, LEARNING, MEDIUM, "security,csp," + CROSS,
           "The Content-Security-Policy forbids inline scripts; third-party widgets (Intercom) are allowed "
           "by hash in `csp.py`, and a new widget needs its domains listed there."),
    Memory("saml-claims", AMARA, LEARNING, MEDIUM, "auth,sso",
           "Enterprise SSO is SAML through python3-saml; Okta sends the email in `NameID`, Azure AD in the "
           "claim `http://schemas.xmlsoap.org/ws/2005/05/identity/claims/emailaddress`. Map both."),
    Memory("gdpr-erasure", AMARA, CORE, HIGH, "privacy,gdpr," + CROSS,
           "GDPR erasure: `manage.py erase_customer <id>` anonymizes orders (kept 10 years for tax law) and "
           "deletes everything else. Never hard-delete orders."),
    Memory("argon2", AMARA, LEARNING, MEDIUM, "auth,security",
           "Passwords are hashed with Argon2 since 2023; old PBKDF2 hashes are upgraded at next login, so "
           "PBKDF2 stays in PASSWORD_HASHERS."),
    Memory("adr-numbers", AMARA, PATTERN, LOW, "docs," + CROSS,
           "Architecture decisions are ADRs in `docs/adr/NNNN-title.md`; take the next free number on "
           "main, not on your branch."),
    Memory("openapi-docs", AMARA, LEARNING, LOW, "docs,api",
           "The public API reference is generated from the OpenAPI schema (drf-spectacular); a docstring "
           "change on a viewset changes the published docs."),
    Memory("dependabot", AMARA, PATTERN, MEDIUM, "dependencies,ci," + CROSS,
           "Dependabot minor and patch bumps auto-merge when CI is green, except `django`, `stripe` and "
           "`celery`, which need a person."),
    Memory("ruff-format", AMARA, LEARNING, LOW, "lint,python," + CROSS,
           "ruff replaced flake8 and isort in 2024 (config in pyproject.toml); `ruff format` is enforced "
           "in CI. Don't reformat unrelated files in a feature PR."),
    Memory("mypy-strict", AMARA, PATTERN, MEDIUM, "typing,python",
           "mypy is strict for `billing/` and `accounts/` only, `--check-untyped-defs` elsewhere. A "
           "`# type: ignore` needs its error code (`# type: ignore[attr-defined]`)."),
    Memory("git-branches", AMARA, PATTERN, LOW, "git," + CROSS,
           "Branches are `<type>/<ticket>-<slug>` (e.g. `fix/ACME-1423-refund-rounding`); squash merge "
           "only, and the PR title becomes the commit message, so write it in the imperative."),
    Memory("session-cookie", AMARA, LEARNING, MEDIUM, "auth,security",
           "The admin session cookie is `SameSite=Strict` and expires after 8 h idle; embedding the admin "
           "in an iframe (the support tool tried) logs people out on every click."),
    Memory("amara-threat-model", AMARA, CORE, LOW, "security,process",
           "Amara asks for a short threat model (assets, entry points, abuse cases) in the PR description "
           "of anything that touches auth or payments."),
)
# fmt: on


TASKS: tuple[Task, ...] = (
    # Billing and the API.
    Task(
        PRIYA,
        "Figure out why a customer's invoice still shows unpaid though Stripe charged the card",
        ("billing-webhook-retries",),
    ),
    Task(
        PRIYA,
        "Make the payment event handler safe when the same notification arrives twice",
        ("billing-idempotency",),
    ),
    Task(PRIYA, "Store prices as decimals in the new quotes model", ("billing-minor-units",)),
    Task(PRIYA, "Speed up the orders list endpoint, which gets slow on deep pages", ("cursor-pagination",)),
    Task(PRIYA, "Reduce the number of database queries the order serializer makes", ("n-plus-one",)),
    Task(
        PRIYA,
        "Schedule the weekly digest email for each account at 9am local time",
        ("schedules-dst", "monthly-reports"),
    ),
    Task(PRIYA, "Refund part of an order that had a coupon applied", ("refund-rounding",)),
    Task(PRIYA, "A customer was charged twice at checkout for the last item in stock", ("stock-oversell",)),
    Task(PRIYA, "Add a yen price to the Japanese pricing page", ("billing-minor-units",)),
    Task(PRIYA, "Retry failed calls to the shipping carrier's API", ("http-client-retries",)),
    Task(PRIYA, "Customers searching for names with accents get no results", ("nfc-names",)),
    # Infrastructure.
    Task(KENJI, "Add an index to the orders table without blocking the release", ("migrations-job",)),
    Task(KENJI, "terraform apply is stuck waiting on a lock in the pipeline", ("terraform-lock",)),
    Task(KENJI, "Roll back yesterday's bad release of the web app", ("rollback-runbook",)),
    Task(KENJI, "Give the new worker pod access to the Mailgun API key", ("external-secrets",)),
    Task(
        KENJI,
        "Connect a new analytics service to the production Postgres database",
        ("pg-connection-budget",),
    ),
    Task(KENJI, "Clear the Redis cache after the pricing change", ("redis-dbs", "product-cache-key")),
    Task(KENJI, "Why does the web pod's memory keep growing?", ("pdf-preview-leak", "gunicorn-max-requests")),
    Task(KENJI, "Run a one-off script to fix the status on two million rows", ("backfills",)),
    Task(KENJI, "Set up a nightly job that purges expired sessions", ("cronjobs",)),
    Task(KENJI, "Why are clients getting 429 errors with nothing in the app logs?", ("rate-limit-nginx",)),
    # Frontend.
    Task(
        ZOE, "The build can't read the API base URL environment variable in the browser", ("vite-env-prefix",)
    ),
    Task(
        ZOE,
        "Fix the flaky end-to-end test that times out waiting for the dashboard",
        ("playwright-networkidle",),
    ),
    Task(ZOE, "Translate the settings screen into German", ("i18n-fallback",)),
    Task(ZOE, "Replace the date library to shrink the JavaScript bundle", ("bundle-budget",)),
    Task(ZOE, "Add a close icon button to the modal", ("aria-labels",)),
    Task(
        ZOE,
        "Users still see the old version of the web app after we shipped a fix",
        ("index-html-cache", "cloudfront-invalidation"),
    ),
    Task(ZOE, "Make the orange call-to-action text readable", ("contrast-orange",)),
    Task(ZOE, "Ask Łukasz for a release candidate build to try on my phone", ("lukasz-rc-builds",)),
    Task(ZOE, "Cache server responses for longer in the React data layer", ("tanstack-gctime",)),
    Task(ZOE, "Speed up the orders table component, it re-renders too often", ("react-memo-mistake",)),
    # Tests and data.
    Task(
        TOMAS,
        "Write a migration that fills the new column for existing orders",
        ("data-migrations", "backfills"),
    ),
    Task(TOMAS, "Tests writing export files fail randomly when run in parallel", ("xdist-tmp",)),
    Task(TOMAS, "Freeze the clock in the monthly report tests", ("time-machine",)),
    Task(TOMAS, "Set up test data for the refund tests", ("factory-boy",)),
    Task(TOMAS, "Track a new analytics event when a user downloads a CSV", ("analytics-events",)),
    Task(TOMAS, "The nightly totals in the sales dashboard are missing today's orders", ("dbt-nightly",)),
    Task(TOMAS, "Mark the flaky checkout test so CI stops failing", ("ci-reruns",)),
    # Mobile.
    Task(LUKASZ, "Ship the iOS build so it is live for Thursday's launch", ("app-store-review",)),
    Task(LUKASZ, "Push notifications stopped arriving on iPhones", ("apns-expiry",)),
    Task(LUKASZ, "Drop the legacy discount field from the order response", ("never-remove-fields",)),
    Task(LUKASZ, "Bump the minimum app version the API accepts", ("min-app-version",)),
    Task(LUKASZ, "Send a link in an email that opens the order screen in the app", ("universal-links",)),
    Task(LUKASZ, "Rotate the keystore used to sign Android uploads", ("android-upload-key",)),
    # Security.
    Task(AMARA, "Add logging of incoming request payloads to debug the signup flow", ("no-pii-logs",)),
    Task(AMARA, "Handle a customer's request to erase their personal data", ("gdpr-erasure",)),
    Task(AMARA, "Support sign-in for an enterprise customer on Azure AD", ("saml-claims",)),
    Task(AMARA, "Embed a chat widget from a third-party vendor on the help page", ("csp-widgets",)),
    Task(
        AMARA, "Investigate users getting logged out after their refresh token was reused", ("jwt-rotation",)
    ),
    Task(AMARA, "Upgrade the Stripe SDK dependency", ("dependabot",)),
    Task(
        AMARA,
        "Review the pull request that changes how admins log in",
        ("session-cookie", "amara-threat-model"),
    ),
)
