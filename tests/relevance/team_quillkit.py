"""Quillkit: a TypeScript SDK, CLI and VS Code extension for a writing-assistant API (pnpm monorepo).

Agents: Dashiell (Lead), Oona (SDK), Kwame (CLI), Saoirse (VS Code extension), Teodor (Tests and
releases).
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

DASHIELL, OONA, KWAME, SAOIRSE, TEODOR = "Dashiell", "Oona", "Kwame", "Saoirse", "Teodor"

# fmt: off
DECISIONS = (
    Decision("qk-d-undici-only", OONA, "The SDK's only runtime dependency is undici",
             "**By:** Oona (SDK)\n"
             "**What:** `@quillkit/sdk` depends on `undici` and nothing else at runtime. Helpers we need "
             "(retry, backoff, SSE parsing) are written in `src/internal/`.\n"
             "**Why:** Every dependency is a supply-chain risk for our users and a version conflict in "
             "their lockfile.",
             296, type=ARCHITECTURAL),
    Decision("qk-d-no-browser", DASHIELL, "No browser build of the SDK before v1",
             "**By:** Dashiell (Lead)\n"
             "**What:** The SDK targets Node only until 1.0. Issues asking for a browser bundle are "
             "labelled `after-v1`.\n"
             "**Why:** API keys in browsers need a token-exchange service we don't have.",
             290, type=SCOPE),
    Decision("qk-d-pnpm", DASHIELL, "pnpm workspaces; no other lockfile",
             "**By:** Dashiell (Lead)\n"
             "**What:** The monorepo is a pnpm workspace (`packages/sdk`, `packages/cli`, "
             "`packages/vscode`, `docs`). Only `pnpm-lock.yaml` is committed; a `package-lock.json` or "
             "`yarn.lock` in a PR is removed.\n"
             "**Why:** Three lockfiles disagreed about the SDK version the extension got.",
             285),
    Decision("qk-d-node-18", TEODOR, "Support Node 18 and later",
             "**By:** Teodor (Tests)\n"
             "**What:** `engines.node` is `>=18`.\n"
             "**Why:** Many users are still on 18.",
             280, archived=True),
    Decision("qk-d-dual-build", OONA, "Dual ESM and CommonJS build with tsup; the exports map is the contract",
             "**By:** Oona (SDK)\n"
             "**What:** `tsup` emits `dist/index.js` (ESM), `dist/index.cjs` and `.d.ts`/`.d.cts`. Every "
             "public entry point is listed in `package.json#exports` with `types`, `import` and `require` "
             "conditions. Anything not in `exports` is private, whatever its path.\n"
             "**Why:** Half our users still `require()` the SDK.",
             275),
    Decision("qk-d-errors", OONA, "Errors are typed QuillError subclasses with a code",
             "**By:** Oona (SDK)\n"
             "**What:** Every error the SDK throws is a `QuillError` subclass (`AuthError`, "
             "`RateLimitError`, `ApiError`, `AbortError`) with a stable `code` string. Never throw a "
             "string or a bare `Error`.\n"
             "**Why:** Users branch on `err.code`; message text changes.",
             270),
    Decision("qk-d-vitest", TEODOR, "vitest, not jest",
             "**By:** Teodor (Tests)\n"
             "**What:** Unit and integration tests run on vitest in every package. `jest` and `ts-jest` "
             "are removed.\n"
             "**Why:** Native ESM and TypeScript without a transform config; twice as fast on CI.",
             262),
    Decision("qk-d-node-floor", TEODOR, "Node 20 is the floor; CI tests 20 and 22",
             "**By:** Teodor (Tests)\n"
             "**What:** `engines.node` is `>=20.11`. The CI matrix runs Node 20 and 22 on Linux and "
             "Windows; macOS runs only on release.\n"
             "**Why:** Node 18 is out of maintenance and lacks `fetch` streaming fixes we rely on.",
             255),
    Decision("qk-d-retries", OONA, "The HTTP client retries 429 and 503, honouring Retry-After",
             "**By:** Oona (SDK)\n"
             "**What:** Requests that get 429 or 503 are retried up to 4 times with full-jitter "
             "exponential backoff (base 500 ms, cap 20 s); a `Retry-After` header overrides the backoff. "
             "POSTs are retried only with an `Idempotency-Key`, which the SDK adds itself.\n"
             "**Why:** The API sheds load with 429s during peaks; clients that retry at once make it "
             "worse.",
             248),
    Decision("qk-d-branches", DASHIELL, "Branch names: squad/{issue}-{slug} for agents, initials/slug for people",
             "**By:** Dashiell (Lead)\n"
             "**What:** Agents' branches are `squad/{issue number}-{short-slug}` "
             "(`squad/212-windows-globs`). People use `{initials}/{slug}` (`dm/release-notes`). Release "
             "branches are `release/0.10`.\n"
             "**Why:** Ralph (the work monitor) finds agents' branches by the `squad/` prefix.",
             240, type=PROCESS),
    Decision("qk-d-conventional", DASHIELL, "Conventional Commits, checked by commitlint",
             "**By:** Dashiell (Lead)\n"
             "**What:** Commit messages are `feat(sdk): …`, `fix(cli): …`, `chore: …`; commitlint runs "
             "in a Husky hook and in CI.\n"
             "**Why:** Readable history; the scope says which package moved.",
             236, type=PROCESS),
    Decision("qk-d-changesets", TEODOR, "A changeset for every user-facing change",
             "**By:** Teodor (Tests)\n"
             "**What:** A PR that changes what users see adds a `.changeset/*.md` (`pnpm changeset`) "
             "naming the packages and the bump. Release notes are the changesets.\n"
             "**Why:** The 0.7 release notes were written from memory and missed two breaking changes.",
             230, type=PROCESS),
    Decision("qk-d-release-script", TEODOR, "Publish with scripts/release.sh",
             "**By:** Teodor (Tests)\n"
             "**What:** `scripts/release.sh` bumps versions, tags, and runs `npm publish` for each "
             "package from the release captain's machine.\n"
             "**Why:** Fast.",
             228),
    Decision("qk-d-directive-laptop", USER, "User directive",
             "**By:** user (via Copilot)\n"
             "**What:** Never publish a package from a laptop. Packages are published only by the "
             "release workflow.\n"
             "**Why:** A local publish shipped a `dist/` built from uncommitted code.",
             198, type=PROCESS),
    Decision("qk-d-release-workflow", TEODOR, "Release with changeset publish from release.yml, with provenance",
             "**Author:** Teodor\n"
             "**Date:** 2026-05-14\n"
             "**Status:** Active\n\n"
             "## Decision\n\n"
             "`.github/workflows/release.yml` opens the \"Version packages\" PR (`changeset version`). "
             "Merging it runs `changeset publish` with `NPM_CONFIG_PROVENANCE=true` and pushes the tags "
             "(`@quillkit/sdk@0.9.1`…). `scripts/release.sh` is deleted.\n\n"
             "## Why\n\n"
             "Provenance and a clean build for every package; nobody's laptop is in the chain.",
             196, replaces="qk-d-release-script"),
    Decision("qk-d-streaming", OONA, "Streaming is an async iterator (QKPLAN-04)",
             "**By:** Oona (SDK)\n"
             "**What:** `client.responses.stream()` returns an `AsyncIterable<StreamEvent>`; users write "
             "`for await (const event of stream)`. The `onToken`/`onDone` callbacks are removed in "
             "v0.9.0. Plan: QKPLAN-04.\n"
             "**Why:** Back-pressure and cancellation come for free; callbacks leaked listeners.",
             190),
    Decision("qk-d-sdk-pin", SAOIRSE, "Pin the SDK to a minor version in the extension",
             "**By:** Saoirse (Extension)\n"
             "**What:** `packages/vscode` depends on `@quillkit/sdk` with a tilde range (`~0.9.2`), not a "
             "caret. Moving to a new minor is its own PR with the extension's integration tests.\n"
             "**Why:** 0.9.0 removed the stream callbacks and a caret range picked it up in a patch of "
             "the extension.",
             186),
    Decision("qk-d-api-keys", OONA, "API keys come from QUILLKIT_API_KEY or the OS keychain",
             "**By:** Oona (SDK)\n"
             "**What:** The SDK reads `QUILLKIT_API_KEY`, else the key passed to the client. The CLI "
             "stores keys in the OS keychain (`keytar`); the extension in VS Code's SecretStorage. Never "
             "in `settings.json`, never in `quillkit.config.ts`.\n"
             "**Why:** Settings files get committed and synced.",
             180),
    Decision("qk-d-telemetry", DASHIELL, "Telemetry is opt-in and off by default",
             "**By:** Dashiell (Lead)\n"
             "**What:** Neither the CLI nor the extension sends usage data unless "
             "`quillkit.telemetry.enabled` (extension) or `QUILLKIT_TELEMETRY=1` (CLI) is set. The first "
             "run prints how to turn it on; it never asks twice.\n"
             "**Why:** Our users work on private manuscripts; trust matters more than numbers.",
             175),
    Decision("qk-d-config-ts", KWAME, "The CLI reads quillkit.config.ts; JSON config deprecated (QKPLAN-07)",
             "**By:** Kwame (CLI)\n"
             "**What:** The CLI loads `quillkit.config.ts` (or `.mjs`) with jiti and validates it with "
             "the `defineConfig()` schema. `quillkit.json` still loads in 0.10 with a deprecation "
             "warning and is removed in 0.12. Plan: QKPLAN-07.\n"
             "**Why:** Users wanted comments, imports and type checking in their config.",
             168),
    Decision("qk-d-deprecations", DASHIELL, "Deprecations last two minor versions",
             "**By:** Dashiell (Lead)\n"
             "**What:** A deprecated API keeps working for two minor releases and warns once per "
             "process (`emitDeprecation(code)`), naming the replacement. Removal is listed in the "
             "changeset.\n"
             "**Why:** Users upgrade every few months, not every release.",
             160, type=PROCESS),
    Decision("qk-d-rfcs", DASHIELL, "Breaking changes need an RFC and the lead's sign-off",
             "**By:** Dashiell (Lead)\n"
             "**What:** Renaming, removing or changing the behaviour of a public API needs an RFC in "
             "`rfcs/` (copy `rfcs/0000-template.md`, number it with the PR) and Dashiell's approval "
             "before any code.\n"
             "**Why:** 0.8's rename of `complete()` to `respond()` surprised the extension team.",
             150, type=PROCESS),
    Decision("qk-d-esbuild-ext", SAOIRSE, "The extension is bundled with esbuild into one file",
             "**By:** Saoirse (Extension)\n"
             "**What:** `esbuild src/extension.ts --bundle --platform=node --external:vscode "
             "--outfile=dist/extension.js`; the VSIX ships `dist/` and no `node_modules`.\n"
             "**Why:** Load time went from 900 ms to 120 ms and `vsce` stopped tripping on pnpm "
             "symlinks.",
             145),
    Decision("qk-d-marketplace-channels", SAOIRSE, "Odd minors are Marketplace pre-releases",
             "**By:** Saoirse (Extension)\n"
             "**What:** Extension versions with an odd minor (0.9.x, 0.11.x) are published with "
             "`--pre-release`; even minors (0.10.x) are stable. Open VSX gets the same versions.\n"
             "**Why:** The Marketplace has no semver pre-release tags; this is the convention it "
             "documents.",
             140, type=PROCESS),
    Decision("qk-d-biome", DASHIELL, "Biome replaces ESLint and Prettier",
             "**By:** Dashiell (Lead)\n"
             "**What:** `biome check --write` formats and lints every package; `.eslintrc` and "
             "`.prettierrc` are deleted.\n"
             "**Why:** One tool, one config, 20× faster in the pre-commit hook.",
             120),
    Decision("qk-d-snapshots", TEODOR, "Snapshot tests only for CLI help and error output",
             "**By:** Teodor (Tests)\n"
             "**What:** `toMatchSnapshot` is allowed for the CLI's `--help` and error messages only. "
             "Regenerate with `pnpm test -u` and review the diff in the PR.\n"
             "**Why:** Snapshots of SDK objects were updated blindly and hid a regression.",
             110),
    Decision("qk-d-concurrency", OONA, "A client sends at most 4 requests at once by default",
             "**By:** Oona (SDK)\n"
             "**What:** `new Quillkit({ maxConcurrency })` defaults to 4; extra requests queue in order.\n"
             "**Why:** The CLI's `batch` command opened 200 sockets and got every key rate-limited.",
             95),
    Decision("qk-d-docs-site", DASHIELL, "The docs site deploys on tags only",
             "**By:** Dashiell (Lead)\n"
             "**What:** `docs/` (Astro Starlight) is deployed by `.github/workflows/deploy-docs.yml` when "
             "an `@quillkit/sdk@*` tag is pushed, so the site always matches the latest release. "
             "Typos are fixed on `main` and ship with the next tag, or with a manual run of the "
             "workflow.\n"
             "**Why:** The site documented unreleased APIs for a month.",
             80, type=PROCESS),
)

MEMORIES = (
    # --- Dashiell (Lead) ---
    Memory("qk-m-dashiell-project", DASHIELL, CORE,
           "**Project:** Quillkit — an SDK, a CLI and a VS Code extension for the Quill writing "
           "assistant API.\n**Stack:** TypeScript 5.6, pnpm, tsup, vitest, Biome.", 296),
    Memory("qk-m-dashiell-role", DASHIELL, CORE,
           "**My role:** Lead. RFCs, breaking changes, the release calendar, triage of new issues.", 296),
    Memory("qk-m-dashiell-update-streaming", DASHIELL, UPDATE,
           "📌 Team update (2026-05-28T16:03Z): streaming is an async iterator, callbacks removed in "
           "0.9.0 — decided by Oona", 182),
    Memory("qk-m-dashiell-triage", DASHIELL, LEARNING,
           "Issues titled \"doesn't work\" are nearly always a missing `QUILLKIT_API_KEY` or a proxy; "
           "the issue template asks for `quillkit doctor` output now.", 140),
    Memory("qk-m-dashiell-calendar", DASHIELL, LEARNING,
           "Minor releases every six weeks; a patch any time. Avoid releasing on Fridays — the "
           "extension's auto-update reaches everyone over the weekend with nobody watching.", 100),
    Memory("qk-m-dashiell-rfc-numbering", DASHIELL, LEARNING,
           "RFC files are named by PR number (`rfcs/0231-stream-cancel.md`); two RFCs from the same "
           "week once both took 0012 when numbered by hand.", 130),
    # --- Oona (SDK) ---
    Memory("qk-m-oona-role", OONA, CORE,
           "**My role:** SDK core (`packages/sdk`): the HTTP client, streaming, retries, types.", 290),
    Memory("qk-m-oona-proxy", OONA, LEARNING,
           "**Corporate proxies:** undici does not read `HTTPS_PROXY` by itself. The client creates a "
           "`ProxyAgent` when `HTTPS_PROXY`/`https_proxy` is set (and honours `NO_PROXY`); before "
           "0.8.4 requests behind a proxy just timed out with `UND_ERR_CONNECT_TIMEOUT`.", 200),
    Memory("qk-m-oona-abort", OONA, LEARNING,
           "**AbortSignal everywhere:** every public method takes `{ signal }`. `stream()` forgot to "
           "pass it to the underlying request, so breaking out of `for await` left the socket open "
           "until the server finished (0.9.1 fix). Test: `stream cancels the request on break`.", 165,
           importance="high", source=AGENT),
    Memory("qk-m-oona-exports", OONA, LEARNING,
           "**Adding an entry point:** a subpath such as `@quillkit/sdk/tools` needs an `exports` entry "
           "with `types`, `import` and `require`, a tsup `entry`, and a `typesVersions` fallback for "
           "`moduleResolution: node` users. 0.8.3 shipped without `types` and broke everyone on "
           "`node16` resolution.", 220, shared=True, source=INBOX),
    Memory("qk-m-oona-retry-after", OONA, LEARNING,
           "**Retry-After can be a date:** parse both delta-seconds and an HTTP-date. We read `Number()` "
           "of a date, got NaN, treated it as 0 and retried in a tight loop against a rate-limited "
           "API.", 150, source=AGENT),
    Memory("qk-m-oona-types", OONA, PATTERN,
           "Public types live in `src/types.ts` and are re-exported from `src/index.ts`; nothing is "
           "imported from deep `dist/` paths in the other packages.", 260),
    Memory("qk-m-oona-token-count", OONA, LEARNING,
           "`countTokens()` on the client is an estimate (characters / 4); the server's `usage` field "
           "is the real count. Don't bill or cut text on the estimate.", 120),
    Memory("qk-m-oona-update-090", OONA, UPDATE,
           "📌 2026-05-30 — v0.9.0 released: streaming as async iterators, `onToken` removed.", 180),
    Memory("qk-m-oona-jitter", OONA, LEARNING,
           "**Backoff jitter:** full jitter (`random(0, min(cap, base·2ⁿ))`). Decorrelated jitter made "
           "the retry tests flaky because its sequence depends on the previous sleep.", 240),
    Memory("qk-m-oona-sse", OONA, LEARNING,
           "The stream is server-sent events; a line may be split across chunks, and a `data:` event "
           "can span lines. `src/internal/sse.ts` buffers until a blank line.", 210),
    Memory("qk-m-oona-keepalive", OONA, LEARNING,
           "undici's default keep-alive timeout (4 s) is shorter than the API's idle timeout; that's "
           "fine, but tests that count sockets must wait for the pool to close "
           "(`await client.close()`).", 90),
    # --- Kwame (CLI) ---
    Memory("qk-m-kwame-role", KWAME, CORE,
           "**My role:** CLI (`packages/cli`): commands, config loading, terminal output.", 280),
    Memory("qk-m-kwame-json-config", KWAME, LEARNING,
           "The CLI's config is `quillkit.json` in the project root.", 250),
    Memory("qk-m-kwame-ts-config", KWAME, LEARNING,
           "The CLI's config is `quillkit.config.ts` (or `.mjs`) loaded with jiti; `quillkit.json` "
           "still loads with a deprecation warning until 0.12.", 166, corrects="qk-m-kwame-json-config"),
    Memory("qk-m-kwame-jiti", KWAME, LEARNING,
           "**Top-level await in config:** jiti 1.x returned `{}` for a `quillkit.config.ts` that used "
           "top-level `await` — no error, just an empty config and \"no files to check\". We require "
           "jiti ≥ 2.1 now.", 140, source=AGENT),
    Memory("qk-m-kwame-globs", KWAME, LEARNING,
           "**Globs on Windows:** fast-glob only understands forward slashes. Patterns built with "
           "`path.join` had backslashes on Windows and matched nothing; build patterns with "
           "`path.posix.join` and convert user input with `toPosix()`.", 120),
    Memory("qk-m-kwame-exit-codes", KWAME, LEARNING,
           "**Exit codes:** 0 success, 1 usage error, 2 the API refused (bad key, rate limit, 4xx), "
           "3 config error, 4 network. Scripts in the wild test for 2; never change them.", 230,
           shared=True, source=INBOX),
    Memory("qk-m-kwame-no-color", KWAME, LEARNING,
           "**Colour in logs:** respect `NO_COLOR`, `FORCE_COLOR` and `--no-color`; CI logs were full of "
           "`\\x1b[32m` before. picocolors decides once at start-up.", 160),
    Memory("qk-m-kwame-spinner", KWAME, LEARNING,
           "The ora spinner must be off when `!process.stdout.isTTY`; piped output filled with spinner "
           "frames (one per 80 ms).", 158),
    Memory("qk-m-kwame-update-init", KWAME, UPDATE,
           "📌 2026-06-15 — `quillkit init` writes a `quillkit.config.ts` with `defineConfig()` "
           "(QKPLAN-07).", 164),
    Memory("qk-m-kwame-doctor", KWAME, LEARNING,
           "`quillkit doctor` prints Node version, config path, whether a key is found (never the key), "
           "proxy variables and the API's reachability. Ask for it in every bug report.", 135),
    Memory("qk-m-kwame-batch", KWAME, LEARNING,
           "`quillkit batch` reads a JSONL file and streams results as they finish; results come back "
           "out of order, each carries its input line number.", 96),
    Memory("qk-m-kwame-keytar", KWAME, LEARNING,
           "keytar needs `libsecret` on Linux; in containers without it the CLI falls back to "
           "`QUILLKIT_API_KEY` and says so.", 176),
    # --- Saoirse (Extension) ---
    Memory("qk-m-saoirse-role", SAOIRSE, CORE,
           "**My role:** The VS Code extension (`packages/vscode`).", 270),
    Memory("qk-m-saoirse-secrets", SAOIRSE, LEARNING,
           "**Where the extension keeps the API key:** `context.secrets` (VS Code's SecretStorage, "
           "backed by the OS keychain). keytar is for the CLI only; inside VS Code it is deprecated "
           "and breaks on remote/WSL.", 178),
    Memory("qk-m-saoirse-activation", SAOIRSE, LEARNING,
           "**Activation:** `onStartupFinished` loaded the whole extension on every window and added "
           "~400 ms to start-up. Activate on `onCommand:quillkit.*` and `onLanguage:markdown` only.",
           150),
    Memory("qk-m-saoirse-vsce", SAOIRSE, LEARNING,
           "`vsce package` follows pnpm's symlinks and fails with \"invalid relative path\"; package "
           "with `--no-dependencies` (esbuild already bundled everything).", 144),
    Memory("qk-m-saoirse-csp", SAOIRSE, LEARNING,
           "**Webview Content-Security-Policy:** scripts need a per-load nonce "
           "(`script-src 'nonce-…'`), styles come from `webview.asWebviewUri`. `unsafe-inline` gets the "
           "extension flagged in the Marketplace review.", 130),
    Memory("qk-m-saoirse-prerelease", SAOIRSE, LEARNING,
           "**Pre-release builds:** `vsce publish --pre-release` for odd minors; testers must switch "
           "the extension to \"Pre-Release Version\" in the Extensions view to get them.", 138),
    Memory("qk-m-saoirse-sdk-pin", SAOIRSE, LEARNING,
           "The extension pins `@quillkit/sdk` to `~0.9.2`. Moving to 0.10 needs the stream adapter "
           "in `src/streamAdapter.ts` updated (event names changed) and the integration tests run "
           "against the real API.", 60, source=AGENT),
    Memory("qk-m-saoirse-update-010", SAOIRSE, UPDATE,
           "📌 2026-08-03 — Extension 0.10.0 is live on the Marketplace and on Open VSX.", 115),
    Memory("qk-m-saoirse-ovsx", SAOIRSE, LEARNING,
           "The Open VSX token (`OVSX_PAT`) expires every year in March; renew it in the repo secrets "
           "before the spring release.", 230),
    Memory("qk-m-saoirse-status-bar", SAOIRSE, LEARNING,
           "The status bar item shows the remaining quota; it refreshes on each response's `usage`, "
           "never by polling.", 70),
    # --- Teodor (Tests and releases) ---
    Memory("qk-m-teodor-role", TEODOR, CORE,
           "**My role:** Tests and releases: CI, the release workflow, the Node matrix.", 280),
    Memory("qk-m-teodor-release-workflow", TEODOR, LEARNING,
           "**Releasing:** merge the \"Version packages\" PR; `release.yml` then runs `changeset "
           "publish` with provenance. If publishing fails after the tags were pushed, delete the tags "
           "(`git push --delete origin @quillkit/sdk@0.9.3`) before re-running, or changesets thinks "
           "the version is out.", 150, shared=True, source=INBOX),
    Memory("qk-m-teodor-unpublish", TEODOR, LEARNING,
           "**A bad version on npm:** `npm unpublish` only works within 72 hours and breaks anyone who "
           "installed it. Deprecate it instead (`npm deprecate @quillkit/sdk@0.9.3 \"broken streaming, "
           "use 0.9.4\"`) and publish a fixed patch at once.", 70, source=AGENT, importance="high"),
    Memory("qk-m-teodor-forks", TEODOR, LEARNING,
           "vitest's `threads` pool broke the CLI tests that call `process.chdir()`; the CLI package "
           "uses `pool: 'forks'`.", 200),
    Memory("qk-m-teodor-msw", TEODOR, LEARNING,
           "HTTP fixtures are msw handlers under `test/fixtures/http/`; re-record them against the "
           "real API with `QK_RECORD=1 pnpm test` (needs a key with the `test` scope).", 190),
    Memory("qk-m-teodor-columns", TEODOR, LEARNING,
           "**Help snapshots:** the CLI wraps help text at the terminal width, so snapshots changed on "
           "wide terminals. The test setup sets `COLUMNS=80` and `NO_COLOR=1`.", 108),
    Memory("qk-m-teodor-matrix", TEODOR, LEARNING,
           "CI matrix: Node 20.x and 22.x on ubuntu-latest and windows-latest; macos-latest only on "
           "release tags (it is slow and billed 10×).", 250),
    Memory("qk-m-teodor-update-091", TEODOR, UPDATE,
           "📌 2026-06-12 — 0.9.1 hotfix released: cancelled streams no longer keep sockets open.", 167),
    Memory("qk-m-teodor-flaky-windows", TEODOR, LEARNING,
           "Windows CI runs fail at random with `EBUSY` when a test deletes a temp folder a child "
           "process still holds; use `rm(…, { maxRetries: 5 })`.", 84),
)

EPISODES = (
    Episode("qk-e-provenance", TEODOR, FAILED,
            "Released 0.9.3 through the release workflow: the tags were pushed but `changeset publish` "
            "failed with E403 while generating provenance.",
            72, files=(".github/workflows/release.yml",),
            difficulties="The workflow lacked `permissions: id-token: write`; re-running failed again "
                         "because the tags already existed.",
            feedback="Check the workflow's permissions block first; delete the pushed tags before a "
                     "re-run."),
    Episode("qk-e-socket-leak", OONA, SUCCEEDED,
            "Fixed sockets staying open after a cancelled stream: `stream()` now passes the caller's "
            "AbortSignal to the request and aborts it when the iterator returns.",
            166, files=("packages/sdk/src/stream.ts", "packages/sdk/test/stream.test.ts")),
    Episode("qk-e-json-and-ts", KWAME, ABANDONED,
            "Tried to merge `quillkit.json` and `quillkit.config.ts` when both exist.",
            167, files=("packages/cli/src/config.ts",),
            difficulties="Precedence rules got confusing and the tests doubled.",
            feedback="Use the TS config and warn about the JSON one instead."),
    Episode("qk-e-vsix", SAOIRSE, SUCCEEDED,
            "Packaged and published extension 0.10.0 with `--no-dependencies` after bundling with "
            "esbuild.", 115, files=("packages/vscode/package.json", "packages/vscode/esbuild.mjs")),
    Episode("qk-e-proxy", OONA, SUCCEEDED,
            "Added `ProxyAgent` support so requests honour `HTTPS_PROXY` and `NO_PROXY`.",
            200, files=("packages/sdk/src/internal/dispatcher.ts",)),
)

SESSIONS = (
    Session("qk-s-090", OONA, "Release 0.9.0 (QKPLAN-04)",
            "0.9.0 shipped: streaming is an async iterator; onToken/onDone removed.\n"
            "Extension pinned to ~0.9.2 after the caret range picked up the breaking change.",
            80, issues=("#188 stream callbacks removed",)),
    Session("qk-s-config-ts", KWAME, "TypeScript config for the CLI (QKPLAN-07)",
            "quillkit init writes quillkit.config.ts; quillkit.json loads with a warning until 0.12.\n"
            "jiti 2.1 required: top-level await configs loaded as empty objects with jiti 1.\n"
            "Merging JSON and TS configs was abandoned.",
            50, issues=("#201 config precedence",)),
    Session("qk-s-ext-010", SAOIRSE, "Extension 0.10 on the Marketplace",
            "0.10.0 live on the Marketplace and Open VSX; packaged with --no-dependencies.\n"
            "Activation limited to commands and markdown files.",
            25),
    Session("qk-s-windows", KWAME, "Windows support for the CLI", "", 4,
            issues=("#212 globs on Windows", "#215 EBUSY in CI")),
)

TASKS = (
    Task(TEODOR, "Take back the broken 0.9.3 package we pushed to the registry yesterday",
         ("qk-m-teodor-unpublish",)),
    Task(SAOIRSE, "Move the extension onto the newest SDK line",
         ("qk-d-sdk-pin", "qk-m-saoirse-sdk-pin")),
    Task(KWAME, "Which name pattern should my working branch for issue 212 use?",
         ("qk-d-branches",)),
    Task(OONA, "Requests from inside a company network never connect",
         ("qk-m-oona-proxy", "qk-e-proxy")),
    Task(KWAME, "People on Windows say their include patterns find no files",
         ("qk-m-kwame-globs",)),
    Task(TEODOR, "Cut the next version of the packages",
         ("qk-d-release-workflow", "qk-m-teodor-release-workflow", "qk-d-directive-laptop")),
    Task(OONA, "The client keeps hammering the service after it is told to slow down",
         ("qk-m-oona-retry-after", "qk-d-retries")),
    Task(SAOIRSE, "Where should the extension store the user's secret key?",
         ("qk-m-saoirse-secrets", "qk-d-api-keys")),
    Task(KWAME, "Our output shows garbage characters in CI logs",
         ("qk-m-kwame-no-color", "qk-m-kwame-spinner")),
    Task(TEODOR, "The help output test fails on a wide terminal",
         ("qk-m-teodor-columns", "qk-d-snapshots")),
    Task(OONA, "Add a separate import path so people can load the tools helpers on their own",
         ("qk-m-oona-exports", "qk-d-dual-build")),
    Task(DASHIELL, "We want to rename a public method; what has to happen first?",
         ("qk-d-rfcs", "qk-d-deprecations")),
    Task(SAOIRSE, "The extension slows down opening a VS Code window",
         ("qk-m-saoirse-activation",)),
    Task(KWAME, "A user's config that awaits something at the top level loads as empty",
         ("qk-m-kwame-jiti", "qk-d-config-ts")),
    Task(TEODOR, "Which Node versions does CI have to cover?",
         ("qk-d-node-floor", "qk-m-teodor-matrix")),
    Task(SAOIRSE, "The Marketplace review flagged the security policy of our panel",
         ("qk-m-saoirse-csp",)),
    Task(OONA, "Breaking out of a response loop leaves connections hanging",
         ("qk-m-oona-abort", "qk-e-socket-leak")),
    Task(DASHIELL, "Should the CLI collect usage statistics?",
         ("qk-d-telemetry",)),
    Task(TEODOR, "The publish job failed with a 403 about provenance",
         ("qk-e-provenance", "qk-m-teodor-release-workflow")),
    Task(SAOIRSE, "Give testers an early build of the extension",
         ("qk-m-saoirse-prerelease", "qk-d-marketplace-channels")),
    Task(KWAME, "What should the command return when the server rejects the key?",
         ("qk-m-kwame-exit-codes", "qk-d-errors")),
    Task(DASHIELL, "What came out of the work on TypeScript config files?",
         ("qk-s-config-ts",)),
    Task(OONA, "Which framework do we write unit tests with?",
         ("qk-d-vitest",)),
    Task(DASHIELL, "A typo on the documentation website needs to go live today",
         ("qk-d-docs-site",)),
)
# fmt: on

TEAM = Team("quillkit", "Quillkit", DECISIONS, MEMORIES, EPISODES, SESSIONS, TASKS)
