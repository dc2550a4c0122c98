"""Loamwise: telemetry for commercial greenhouses (ESP32 firmware, a Go ingest service, TimescaleDB,
Grafana, k3s on the site gateways).

Agents: Anahí (Lead), Björn (Firmware), Chidi (Ingest), Dagny (Data and dashboards), Émile (Platform).
"""

# The ledger is written as people write: en dashes, degree and multiplication signs stay.
# ruff: noqa: RUF001

from __future__ import annotations

from tests.relevance.corpus import (
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

ANAHI, BJORN, CHIDI, DAGNY, EMILE = "Anahí", "Björn", "Chidi", "Dagny", "Émile"

# fmt: off
DECISIONS = (
    Decision("lw-d-offline", ANAHI, "A site keeps working for 72 hours without the internet",
             "**By:** Anahí (Lead)\n"
             "**What:** The gateway in each greenhouse site buffers every reading and keeps local alerts "
             "running for at least 72 h offline. Nothing a grower relies on needs the cloud.\n"
             "**Why:** Rural sites lose their uplink for days after storms.",
             298, type=ARCHITECTURAL),
    Decision("lw-d-no-actuators", ANAHI, "Scope: Loamwise measures, it never controls",
             "**By:** Anahí (Lead)\n"
             "**What:** No actuator control from Loamwise: we don't open vents, start heaters or pumps. "
             "Growers' climate computers do that.\n"
             "**Why:** Liability for a crop lost to a bad command; certification of control systems.",
             292, type=SCOPE),
    Decision("lw-d-influx", CHIDI, "Store readings in InfluxDB",
             "**By:** Chidi (Ingest)\n"
             "**What:** Readings go to InfluxDB 2 with one bucket per site.\n"
             "**Why:** Built for time series.",
             288),
    Decision("lw-d-topics", CHIDI, "MQTT topics are lw/{site}/{house}/{sensor}/{metric}",
             "**By:** Chidi (Ingest)\n"
             "**What:** Devices publish to `lw/{site}/{house}/{sensor_id}/{metric}`, e.g. "
             "`lw/almeria/b3/sht45-07/temperature`. Metrics are lower-case nouns (`temperature`, "
             "`humidity`, `co2`, `soil_moisture`, `par`). Control messages use `…/ctl/…`.\n"
             "**Why:** ACLs per site and house are one wildcard each; Grafana variables map onto the "
             "levels.",
             284),
    Decision("lw-d-timescale", CHIDI, "TimescaleDB hypertables for readings",
             "**Author:** Chidi\n"
             "**Date:** 2026-03-06\n"
             "**Status:** Accepted\n\n"
             "## Context\n\n"
             "InfluxDB's query language was a second thing to learn, joins with device metadata were "
             "impossible, and the OSS edition dropped clustering.\n\n"
             "## Decision\n\n"
             "`readings` is a TimescaleDB hypertable partitioned by `time` in 7-day chunks. Chunks older "
             "than 14 days are compressed (`segmentby device_id`). Hourly rollups are a continuous "
             "aggregate, `readings_hourly`.\n\n"
             "## Consequences\n\n"
             "| | before | after |\n"
             "|---|---|---|\n"
             "| storage per site-month | 9.1 GB | 1.3 GB |\n"
             "| 30-day house query | 4.2 s | 0.3 s |\n\n"
             "Compressed chunks are read-only in practice (see the calibration decision).",
             265, replaces="lw-d-influx"),
    Decision("lw-d-si-units", BJORN, "Readings are in SI units, converted on the device",
             "**By:** Björn (Firmware)\n"
             "**What:** Devices send °C, %RH, ppm, m³/m³ and µmol/m²/s. Conversion happens in firmware; "
             "the cloud never guesses a unit.\n"
             "**Why:** A Fahrenheit test build once looked like a heat wave.",
             260),
    Decision("lw-d-protobuf", CHIDI, "Device payloads are protobuf, never JSON over the radio",
             "**By:** Chidi (Ingest)\n"
             "**What:** Readings are encoded with `proto/reading.proto` (`Reading{device_id, seq, ts, "
             "ts_source, metric, value}`), batched up to 32 per message.\n"
             "**Why:** A JSON reading was 140 bytes, protobuf is 19; Wi-Fi at the far end of a house is "
             "weak.",
             255),
    Decision("lw-d-idempotent", CHIDI, "Ingest is idempotent on (device_id, seq)",
             "**By:** Chidi (Ingest)\n"
             "**What:** Every reading carries a per-device sequence number; the `readings` table has a "
             "unique index on `(device_id, seq, time)` and inserts use `ON CONFLICT DO NOTHING`.\n"
             "**Why:** MQTT QoS 1 delivers at least once; redeliveries must not double the data.",
             250),
    Decision("lw-d-device-time", BJORN, "Timestamps come from the device; server time only as a flagged fallback",
             "**By:** Björn (Firmware)\n"
             "**What:** `ts` is set by the device (SNTP, or GPS on outdoor masts). When a device has no "
             "time yet it sends `ts_source=boot` and the ingest stamps server time and keeps "
             "`ts_source=server`.\n"
             "**Why:** Buffered readings arrive hours late after an outage; server time would put them "
             "in the wrong hour.",
             245),
    Decision("lw-d-device-certs", EMILE, "Each device has its own X.509 client certificate",
             "**By:** Émile (Platform)\n"
             "**What:** Devices connect to the broker with mutual TLS. Each has a certificate whose CN is "
             "its EUI, issued by our step-ca at provisioning; the broker maps the CN to the device's "
             "topic ACL.\n"
             "**Why:** A shared password leaked with one stolen board would open every site.",
             240),
    Decision("lw-d-go-version", CHIDI, "Go 1.23, govulncheck in CI",
             "**By:** Chidi (Ingest)\n"
             "**What:** Services build with Go 1.23 (`toolchain go1.23.4` in `go.mod`). CI runs `go vet`, "
             "`staticcheck` and `govulncheck ./...`; a vulnerable dependency fails the build.\n"
             "**Why:** Two CVEs in `golang.org/x/net` reached production before anyone noticed.",
             235),
    Decision("lw-d-k3s", EMILE, "k3s on the site gateways, charts in deploy/charts",
             "**By:** Émile (Platform)\n"
             "**What:** Each site gateway (an industrial mini PC) runs single-node k3s with the broker "
             "bridge, the local alerter and the buffer. Helm charts live in `deploy/charts/`; values per "
             "site in `deploy/sites/{site}.yaml`.\n"
             "**Why:** The same charts run on the gateways and in the cloud cluster.",
             230),
    Decision("lw-d-lorawan", BJORN, "Use LoRaWAN for the outdoor masts",
             "**By:** Björn (Firmware)\n"
             "**What:** Outdoor weather masts talk LoRaWAN to a gateway on the packing-house roof.\n"
             "**Why:** Range.",
             225, archived=True),
    Decision("lw-d-ota-rings", BJORN, "Firmware goes out in rings: lab, one house, everyone",
             "**By:** Björn (Firmware)\n"
             "**What:** A signed firmware image goes to ring 0 (the lab bench), then ring 1 (house B3 in "
             "Almería) for 48 hours, then ring 2 (all sites). The OTA service keeps the previous image "
             "per ring; `lwctl ota promote|halt|revert --ring N` moves it.\n"
             "**Why:** fw-v2.1 bricked the humidity sensors of a whole site in one night.",
             215),
    Decision("lw-d-fw-semver", BJORN, "Firmware versions are fw-vMAJOR.MINOR.PATCH; no downgrades",
             "**By:** Björn (Firmware)\n"
             "**What:** Images are tagged `fw-v2.4.1`; the device refuses an image whose version is "
             "lower than its own unless it carries the `allow_downgrade` flag signed by the release key.\n"
             "**Why:** Anti-rollback: an old image with a known bug must not be replayable.",
             210),
    Decision("lw-d-directive-friday", USER, "User directive",
             "**By:** user (via Copilot)\n"
             "**What:** No firmware goes to growers' greenhouses on a Friday or the day before a holiday.\n"
             "**Why:** Nobody drives to Almería on a Saturday to reflash boards.",
             205, type=PROCESS),
    Decision("lw-d-retention", DAGNY, "Raw readings kept 90 days, hourly rollups forever",
             "**By:** Dagny (Data)\n"
             "**What:** A retention policy drops `readings` chunks older than 90 days; `readings_hourly` "
             "is kept without limit. Growers asking for older raw data get hourly values.\n"
             "**Why:** Raw data at 10 s resolution is 80 % of the storage bill and nobody reads it "
             "after a season.",
             200),
    Decision("lw-d-calibration", DAGNY, "Calibration offsets are applied at query time",
             "**By:** Dagny (Data)\n"
             "**What:** A sensor's offset and gain live in `sensor_calibration(sensor_id, valid_from, "
             "offset, gain)`; views and dashboards apply the one valid at the reading's time. Readings "
             "are never rewritten.\n"
             "**Why:** Compressed chunks can't be updated cheaply, and a wrong correction must be "
             "reversible.",
             190),
    Decision("lw-d-dashboards-code", DAGNY, "Dashboards are code, provisioned from dashboards/",
             "**By:** Dagny (Data)\n"
             "**What:** Every Grafana dashboard is JSON in `dashboards/`, provisioned read-only. A change "
             "is made in a scratch copy, exported and merged by PR.\n"
             "**Why:** Two people edited the same dashboard in the UI and one lost a day's work.",
             185),
    Decision("lw-d-alerting", EMILE, "Alerts go to the Matrix room; only frost risk pages",
             "**By:** Émile (Platform)\n"
             "**What:** Grafana alert rules notify the `#lw-alerts` Matrix room. Only the frost-risk rule "
             "pages the on-call phone (via ntfy). Device offline, battery low and the like are room "
             "messages.\n"
             "**Why:** People muted the phone after a week of battery alerts.",
             180),
    Decision("lw-d-frost", ANAHI, "Frost alert: 2 °C at canopy height for 15 minutes",
             "**By:** Anahí (Lead)\n"
             "**What:** The frost-risk alert fires when any canopy-height temperature sensor in a house "
             "reads ≤ 2.0 °C for 15 minutes (calibrated values). Gateways evaluate it locally too.\n"
             "**Why:** Growers start their frost protection at 3 °C; 15 minutes keeps one bad reading from "
             "waking anyone.",
             170),
    Decision("lw-d-slog", CHIDI, "Structured logs with slog",
             "**By:** Chidi (Ingest)\n"
             "**What:** Go services log with `log/slog`: JSON in production, text locally. Every line "
             "carries `site` and `device_id` where known. No `fmt.Println`.\n"
             "**Why:** Loki queries by field instead of regex.",
             160),
    Decision("lw-d-ingest-releases", CHIDI, "Ingest releases: tag ingest/vX.Y.Z, built by goreleaser",
             "**By:** Chidi (Ingest)\n"
             "**What:** A release of the ingest service is a tag `ingest/v1.8.0` on `main`. goreleaser "
             "builds the multi-arch image and the changelog; Émile's Flux picks the image up in the "
             "cloud cluster.\n"
             "**Why:** The monorepo holds three services; prefixed tags keep their versions apart.",
             150, type=PROCESS),
    Decision("lw-d-pr-titles", ANAHI, "PR titles carry the ticket; squash merge only",
             "**By:** Anahí (Lead)\n"
             "**What:** PR titles start with the ticket (`LW-214: frost panel per house`); PRs are "
             "squash-merged so each ticket is one commit on `main`.\n"
             "**Why:** The changelog is built from titles.",
             140, type=PROCESS),
    Decision("lw-d-backfill", CHIDI, "Backfills run at night, rate-limited",
             "**By:** Chidi (Ingest)\n"
             "**What:** `lwctl backfill --from … --to … --rate 500/s` replays archived readings through "
             "the normal ingest path, only between 01:00 and 05:00 site time, and refreshes "
             "`readings_hourly` for the window afterwards.\n"
             "**Why:** The first backfill ran at noon and delayed live frost alerts by 20 minutes.",
             110),
    Decision("lw-d-co2-units", BJORN, "CO₂ sensors report ppm, averaged over 30 seconds",
             "**By:** Björn (Firmware)\n"
             "**What:** SCD41 sensors measure every 5 s; the device sends the 30-second mean in ppm with "
             "the sample count. Metric name `co2`.\n"
             "**Why:** Single readings jump by ±50 ppm when someone walks past.",
             90),
)

MEMORIES = (
    # --- Anahí (Lead) ---
    Memory("lw-m-anahi-project", ANAHI, CORE,
           "**Project:** Loamwise — telemetry for commercial greenhouses (temperature, humidity, CO₂, "
           "soil moisture, light).\n**Stack:** ESP32-S3 firmware, Go ingest, TimescaleDB, Grafana, "
           "k3s on the site gateways.", 298),
    Memory("lw-m-anahi-role", ANAHI, CORE,
           "**My role:** Lead. ADRs, rollout plans, the growers' contact.", 298),
    Memory("lw-m-anahi-phones", ANAHI, LEARNING,
           "Growers read the dashboards on their phones inside the greenhouse, with gloves: big "
           "numbers, one panel per screen, no dense tables.", 200, shared=True, source=INBOX),
    Memory("lw-m-anahi-update-protobuf", ANAHI, UPDATE,
           "📌 Team update (2026-04-14T08:30Z): device payloads are protobuf — decided by Chidi", 226),
    Memory("lw-m-anahi-sites", ANAHI, LEARNING,
           "Sites: Almería (6 houses, tomatoes), Westland (4 houses, orchids), Skåne (2 houses, "
           "herbs). Almería is UTC+1/+2 like Westland; all three share `Europe/…` zones with DST.", 150),
    Memory("lw-m-anahi-visits", ANAHI, LEARNING,
           "A site visit needs a week's notice to the grower and a hygiene briefing (no tomato plants "
           "from home, overshoes).", 120),
    # --- Björn (Firmware) ---
    Memory("lw-m-bjorn-role", BJORN, CORE,
           "**My role:** Firmware for the ESP32-S3 sensor boards (ESP-IDF 5.2).", 280),
    Memory("lw-m-bjorn-unsigned", BJORN, LEARNING,
           "OTA images are unsigned during the pilot.", 276),
    Memory("lw-m-bjorn-signed", BJORN, LEARNING,
           "OTA images are signed with the `lw-fw-2026` key (secure boot v2); since fw-v2.3.0 a board "
           "rejects an unsigned image.", 200, corrects="lw-m-bjorn-unsigned"),
    Memory("lw-m-bjorn-partitions", BJORN, LEARNING,
           "**OTA partitions:** two OTA slots of 1.8 MB each. An image bigger than that flashes fine "
           "over USB but fails over the air with `ESP_ERR_OTA_VALIDATE_FAILED`, and only on the device; "
           "CI doesn't catch it. Check `idf.py size` against 1.8 MB before tagging.", 150),
    Memory("lw-m-bjorn-mark-valid", BJORN, LEARNING,
           "**Boot loops after an update:** a new image must call "
           "`esp_ota_mark_app_valid_cancel_rollback()` only after it has connected to MQTT and sent "
           "one reading. Marking it valid at boot kept a broken image that reset under the watchdog "
           "forever; not marking it at all made the bootloader revert after every reset.", 62,
           importance="high", source=AGENT),
    Memory("lw-m-bjorn-tx-spikes", BJORN, LEARNING,
           "**Humidity spikes:** the SHT45 reads 3–5 %RH high right after the Wi-Fi radio transmits "
           "(the board warms up). Read the sensors first, then transmit; never the other way round.",
           170),
    Memory("lw-m-bjorn-nvs-seq", BJORN, LEARNING,
           "`seq` is written to NVS every 50 readings; after a crash the board skips ahead by 50, so "
           "sequence numbers never repeat (ingest's idempotency depends on it).", 240),
    Memory("lw-m-bjorn-sntp", BJORN, LEARNING,
           "SNTP's first sync can take 20 s with weak Wi-Fi at the far end of a house; readings taken "
           "before it carry `ts_source=boot`.", 230),
    Memory("lw-m-bjorn-flash", BJORN, LEARNING,
           "Lab flashing: `idf.py -p /dev/ttyACM0 flash monitor`; a new S3 board needs BOOT held while "
           "plugging in for its first flash.", 260),
    Memory("lw-m-bjorn-update-ring1", BJORN, UPDATE,
           "📌 2026-09-20 — fw-v2.4.0 on ring 1 (house B3).", 67),
    Memory("lw-m-bjorn-battery", BJORN, LEARNING,
           "Battery boards (soil probes) deep-sleep 10 minutes between readings; Wi-Fi association "
           "costs more than the measurement, so they batch 6 readings per wake-up.", 140),
    Memory("lw-m-bjorn-scd41", BJORN, LEARNING,
           "SCD41 CO₂ sensors need a forced recalibration at 400 ppm outdoors after shipping; "
           "`scd41_frc(400)` from the lab console.", 88),
    # --- Chidi (Ingest) ---
    Memory("lw-m-chidi-role", CHIDI, CORE,
           "**My role:** The ingest service (Go): MQTT subscriber, validation, writes to Timescale.",
           280),
    Memory("lw-m-chidi-duplicates", CHIDI, LEARNING,
           "**Readings stored twice:** after the broker restarts, every gateway's bridge re-sends its "
           "unacknowledged QoS 1 messages. Without the unique index and `ON CONFLICT (device_id, seq, "
           "time) DO NOTHING` each of those readings is stored a second time.", 130, importance="high",
           source=AGENT),
    Memory("lw-m-chidi-pgx-batch", CHIDI, LEARNING,
           "**pgx batch size:** `pgx.Batch` of 1000 rows. 5000 rows with 7 columns passed the "
           "65,535-parameter limit of a single statement; use `CopyFrom` for bulk loads like "
           "backfills.", 160),
    Memory("lw-m-chidi-ack-after-commit", CHIDI, LEARNING,
           "Ack an MQTT message only after its batch commits; when Timescale is slow the in-flight "
           "window fills and the broker holds further messages (backpressure, nothing lost).", 220),
    Memory("lw-m-chidi-reconnect", CHIDI, LEARNING,
           "**Reconnect storms:** after a broker restart all gateways reconnected in the same second. "
           "`SetConnectRetryInterval` with random jitter (0–30 s) on the bridge side fixed it.", 190),
    Memory("lw-m-chidi-ranges", CHIDI, LEARNING,
           "**Wrong units from one house:** house C2 sent Fahrenheit after a firmware test build. Ingest "
           "now rejects values outside physical ranges (temperature −40…60, humidity 0…100, CO₂ "
           "0…10000) into `rejected_readings` with the reason, and alerts once per device.", 120),
    Memory("lw-m-chidi-context", CHIDI, PATTERN,
           "Handlers take `ctx context.Context` first; every goroutine has a way to stop; no "
           "`time.Sleep` in a loop without a `select` on `ctx.Done()`.", 250),
    Memory("lw-m-chidi-goreleaser", CHIDI, LEARNING,
           "**goreleaser in the monorepo:** tags are `ingest/v1.7.0`, so goreleaser needs "
           "`GORELEASER_CURRENT_TAG` and `monorepo.tag_prefix: ingest/`; without them it picked the "
           "`gateway/` tag and built the wrong changelog.", 100),
    Memory("lw-m-chidi-update-170", CHIDI, UPDATE,
           "📌 2026-08-17 — ingest/v1.7.0 deployed: protobuf v2 payloads, batched readings.", 101),
    Memory("lw-m-chidi-nats", CHIDI, LEARNING,
           "Looked at NATS JetStream instead of Mosquitto; not worth it for six gateways, revisit past "
           "50 sites.", 140),
    # --- Dagny (Data and dashboards) ---
    Memory("lw-m-dagny-role", DAGNY, CORE,
           "**My role:** Data and dashboards: Timescale queries, rollups, Grafana.", 270),
    Memory("lw-m-dagny-cagg", DAGNY, LEARNING,
           "**Late readings and the hourly rollup:** `readings_hourly` refreshes every 30 minutes over "
           "the last 3 days (`start_offset => INTERVAL '3 days'`). Readings that arrive later than that "
           "(a gateway offline for a week) never reach the rollup until someone runs "
           "`CALL refresh_continuous_aggregate('readings_hourly', '<from>', '<to>')`.", 58,
           importance="high", source=AGENT),
    Memory("lw-m-dagny-compressed", DAGNY, LEARNING,
           "Compressed chunks reject `UPDATE` (or decompress the whole chunk first, minutes per chunk); "
           "corrections go through `sensor_calibration`, never by rewriting readings.", 180),
    Memory("lw-m-dagny-provisioning", DAGNY, LEARNING,
           "**Grafana UI edits vanish:** provisioned dashboards are reset from `dashboards/*.json` on "
           "every restart. Save-as a scratch copy, edit it, export the JSON into `dashboards/` and "
           "open a PR.", 175, shared=True, source=INBOX),
    Memory("lw-m-dagny-tz", DAGNY, LEARNING,
           "Dashboards use the site's time zone (`Europe/Madrid` for Almería), not the browser's; "
           "growers on holiday saw their nights shifted.", 150),
    Memory("lw-m-dagny-vpd", DAGNY, LEARNING,
           "**VPD panel:** vapour pressure deficit is computed in SQL (Tetens) from temperature and "
           "humidity of the same house and the same minute; mixing houses gave negative VPD.", 125),
    Memory("lw-m-dagny-slow-panel", DAGNY, LEARNING,
           "**Slow 30-day panel:** \"all houses, last 30 days\" read raw `readings` (40 M rows). Pointed "
           "at `readings_hourly` it loads in 0.2 s instead of 8 s. Anything over 2 days should read "
           "the rollup.", 95),
    Memory("lw-m-dagny-update-frost", DAGNY, UPDATE,
           "📌 2026-10-08 — Frost panel added to the Almería dashboard, one stat per house.", 49),
    Memory("lw-m-dagny-export", DAGNY, LEARNING,
           "Growers' CSV exports come from `lwctl export --site … --month …` (hourly values, site "
           "time, semicolon-separated for Spanish Excel).", 70),
    Memory("lw-m-dagny-par", DAGNY, LEARNING,
           "Daily light integral = sum of PAR × seconds / 1e6 per day in site time; the panel must "
           "group by local day, not UTC day.", 110),
    # --- Émile (Platform) ---
    Memory("lw-m-emile-role", EMILE, CORE,
           "**My role:** Platform: k3s on the gateways, the cloud cluster, certificates, backups, "
           "alerting.", 270),
    Memory("lw-m-emile-step-ca", EMILE, LEARNING,
           "**Provisioning a board:** `lwctl provision --eui <EUI>` asks step-ca (`lw-devices` "
           "provisioner) for a certificate with CN = EUI, one year valid, and writes it to the board "
           "over USB. Renewal runs over `lw/{site}/{house}/ctl/cert` 30 days before expiry.", 140),
    Memory("lw-m-emile-sd-cards", EMILE, LEARNING,
           "**Gateways' SD cards wear out** (k3s writes constantly): two died in a year. k3s data now "
           "lives on the USB SSD, `/var/lib/rancher` bind-mounted from `/mnt/ssd`.", 160),
    Memory("lw-m-emile-buffer", EMILE, LEARNING,
           "The gateway's mosquitto bridge queues up to 500,000 messages (`max_queued_messages`), "
           "about 72 h for a six-house site.", 210),
    Memory("lw-m-emile-helm-stuck", EMILE, LEARNING,
           "**Helm release stuck in `pending-upgrade`:** happens when the connection drops mid-upgrade. "
           "`helm history ingest -n lw` to find the last deployed revision, `helm rollback ingest <rev> "
           "-n lw`, then upgrade again. Don't delete the release secret by hand.", 85, source=AGENT),
    Memory("lw-m-emile-pgbackrest", EMILE, LEARNING,
           "**Timescale backups:** pgBackRest to S3 (`lw-pgbackrest`), full every Sunday, differential "
           "daily, WAL archived continuously. Restore to a point in time: `pgbackrest --stanza=lw "
           "--type=time --target=\"2026-10-01 12:00\" restore` on a stopped replica.", 120),
    Memory("lw-m-emile-matrix", EMILE, LEARNING,
           "Grafana's contact point posts to `#lw-alerts:matrix.org` through the webhook bridge; the "
           "bot's access token is in Vault at `kv/lw/matrix`. Only the platform team can invite "
           "people to the room.", 150),
    Memory("lw-m-emile-update-k3s", EMILE, UPDATE,
           "📌 2026-10-18 — All six gateways on k3s v1.31.", 39),
    Memory("lw-m-emile-vault", EMILE, PATTERN,
           "Secrets for the cloud cluster come from Vault through the external-secrets operator; "
           "nothing secret in `deploy/sites/*.yaml`.", 200, shared=True, source=INBOX),
    Memory("lw-m-emile-flux", EMILE, LEARNING,
           "Flux's image automation only follows tags matching `ingest/v*`; a tag without the prefix "
           "is built but never deployed.", 105),
)

EPISODES = (
    Episode("lw-e-boot-loop", BJORN, FAILED,
            "Rolled fw-v2.4.0 from ring 1 to ring 2 (all sites); 3 boards in Westland boot-looped and "
            "reverted to fw-v2.3.2.",
            60, files=("main/ota.c",),
            difficulties="The image was marked valid at boot, before MQTT connected; boards whose Wi-Fi "
                         "was slow reset under the watchdog.",
            feedback="Halt ring 2 with `lwctl ota halt --ring 2` first, then revert; mark images valid "
                     "only after the first reading is sent."),
    Episode("lw-e-duplicates", CHIDI, SUCCEEDED,
            "Stopped readings being stored twice after broker restarts: unique index on (device_id, "
            "seq, time) and ON CONFLICT DO NOTHING.", 130,
            files=("ingest/store/readings.go", "migrations/0019_readings_unique.sql")),
    Episode("lw-e-cagg-refresh", DAGNY, SUCCEEDED,
            "Filled the hole in the hourly charts after Westland's gateway was offline for nine days: "
            "ran refresh_continuous_aggregate over the offline window.",
            56, difficulties="The regular refresh only looks back three days, so the late readings "
                             "never reached the rollup by themselves."),
    Episode("lw-e-helm", EMILE, FAILED,
            "Upgrading the ingest chart on the cloud cluster hung; the release stayed in "
            "pending-upgrade and every new upgrade was refused.",
            86, files=("deploy/charts/ingest/values.yaml",),
            difficulties="The VPN dropped in the middle of `helm upgrade`.",
            feedback="Roll back to the last deployed revision before retrying."),
    Episode("lw-e-backfill-noon", CHIDI, FAILED,
            "Replayed two weeks of archived readings for Skåne during the day.",
            112, difficulties="Live frost alerts were delayed by 20 minutes while the backfill ran.",
            feedback="Only at night, rate-limited."),
)

SESSIONS = (
    Session("lw-s-outage", EMILE, "January outage recovery",
            "Westland's uplink was down nine days; the gateway buffered everything and alerts kept "
            "running locally.\n"
            "Late readings reached the hourly rollup only after a manual refresh of readings_hourly.\n"
            "Bridge reconnect jitter added after the broker restart storm.",
            55, issues=("LW-198 rollup hole", "LW-201 reconnect storm")),
    Session("lw-s-ring1", BJORN, "fw-v2.4 rollout",
            "fw-v2.4.0 on ring 1 (B3) for 48 h without issues; ring 2 boot loops on 3 boards, "
            "reverted.\n"
            "Images are now marked valid only after the first reading.",
            40, issues=("LW-207 boot loop on ring 2",)),
    Session("lw-s-almeria", ANAHI, "Almería onboarding of houses B4–B6",
            "Three new houses provisioned; frost panel on the Almería dashboard.", 20),
    Session("lw-s-winter", ANAHI, "Winter readiness", "", 3, issues=("LW-220 frost alert test",)),
)

TASKS = (
    Task(BJORN, "Undo the new firmware in house B3, the boards keep restarting",
         ("lw-m-bjorn-mark-valid", "lw-e-boot-loop", "lw-d-ota-rings")),
    Task(CHIDI, "Where should a new CO₂ sensor send its values?",
         ("lw-d-topics",)),
    Task(DAGNY, "The hourly chart has a gap for last week although the data arrived later",
         ("lw-m-dagny-cagg", "lw-e-cagg-refresh", "lw-s-outage")),
    Task(EMILE, "The ingest deployment is stuck and refuses a new release",
         ("lw-m-emile-helm-stuck", "lw-e-helm")),
    Task(CHIDI, "After the broker restarted we kept every measurement twice",
         ("lw-m-chidi-duplicates", "lw-d-idempotent", "lw-e-duplicates")),
    Task(DAGNY, "A probe in house A1 reads 0.8 degrees too warm; correct its history",
         ("lw-d-calibration", "lw-m-dagny-compressed")),
    Task(BJORN, "Can I send the new image to the growers this Friday afternoon?",
         ("lw-d-directive-friday", "lw-d-ota-rings")),
    Task(EMILE, "A new sensor board needs an identity before it may connect",
         ("lw-d-device-certs", "lw-m-emile-step-ca")),
    Task(DAGNY, "The month overview of all houses takes ages to load",
         ("lw-m-dagny-slow-panel",)),
    Task(CHIDI, "How long do we keep individual measurements before they are deleted?",
         ("lw-d-retention",)),
    Task(DAGNY, "I changed a dashboard in the browser and my change disappeared",
         ("lw-m-dagny-provisioning", "lw-d-dashboards-code")),
    Task(BJORN, "The new build installs over the cable but not over the air",
         ("lw-m-bjorn-partitions",)),
    Task(CHIDI, "One house sends temperatures in the wrong scale",
         ("lw-m-chidi-ranges", "lw-d-si-units")),
    Task(EMILE, "Where do alert messages go, and which of them wake someone up?",
         ("lw-d-alerting", "lw-m-emile-matrix")),
    Task(DAGNY, "When do we warn growers about cold nights?",
         ("lw-d-frost",)),
    Task(CHIDI, "Tag and build the next version of the ingest service",
         ("lw-d-ingest-releases", "lw-m-chidi-goreleaser")),
    Task(EMILE, "The storage cards in the gateways keep dying",
         ("lw-m-emile-sd-cards",)),
    Task(BJORN, "Humidity jumps whenever a board sends its data",
         ("lw-m-bjorn-tx-spikes",)),
    Task(CHIDI, "Re-import three months of archived measurements without hurting the live sites",
         ("lw-d-backfill", "lw-e-backfill-noon", "lw-m-chidi-pgx-batch")),
    Task(ANAHI, "What did we learn from the long uplink outage in Westland?",
         ("lw-s-outage",)),
    Task(EMILE, "Bring the Timescale database back to how it was last Wednesday noon",
         ("lw-m-emile-pgbackrest",)),
    Task(CHIDI, "Which encoding should devices use for what they transmit?",
         ("lw-d-protobuf",)),
)
# fmt: on

TEAM = Team("loamwise", "Loamwise", DECISIONS, MEMORIES, EPISODES, SESSIONS, TASKS)
