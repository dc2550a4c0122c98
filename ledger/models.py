"""The ledger's state and the constraints the database enforces (docs/ledger.md).

Rules that involve more than one row live in `ledger.services`; here are the fields, the
value sets (each backed by a named check constraint) and the uniqueness the database decides.
"""

from __future__ import annotations

import hashlib

from django.conf import settings
from django.db import models
from django.db.models import F, Q
from django.utils import timezone

from ledger.values import AGENT_KEY_MAX_LENGTH, AGENT_NAME_MAX_LENGTH, AGENT_SKELETON_MAX_LENGTH


class EntryType(models.TextChoices):
    ARCHITECTURAL = "architectural"
    SCOPE = "scope"
    PROCESS = "process"
    TECHNICAL = "technical"
    PATTERN = "pattern"
    LEARNING = "learning"
    UPDATE = "update"


class EntryStatus(models.TextChoices):
    PENDING = "pending"
    MERGED = "merged"
    REJECTED = "rejected"


class DecisionType(models.TextChoices):
    ARCHITECTURAL = "architectural"
    SCOPE = "scope"
    PROCESS = "process"
    TECHNICAL = "technical"


class DecisionStatus(models.TextChoices):
    ACTIVE = "active"
    SUPERSEDED = "superseded"
    ARCHIVED = "archived"


class MemoryType(models.TextChoices):
    CORE_CONTEXT = "core_context"
    LEARNING = "learning"
    PATTERN = "pattern"
    UPDATE = "update"


class Importance(models.TextChoices):
    HIGH = "high"
    MEDIUM = "medium"
    LOW = "low"


class MemoryStatus(models.TextChoices):
    ACTIVE = "active"
    ARCHIVED = "archived"
    # Replaced by a later memory that corrects it (or that a coordinator merged it into): kept and
    # linked through `superseded_by`, never injected.
    SUPERSEDED = "superseded"


class MemoryCategory(models.TextChoices):
    """What kind of learning a coordinator injected; blank for every other memory."""

    MISTAKE_PATTERN = "mistake-pattern"
    BEST_PRACTICE = "best-practice"
    CODEBASE_KNOWLEDGE = "codebase-knowledge"
    PREFERENCE = "preference"


class Source(models.TextChoices):
    AGENT = "agent"
    COORDINATOR = "coordinator"
    INBOX = "inbox"
    IMPORT = "import"
    ADMIN = "admin"
    # A closed session's summary, kept as a memory when the session ends.
    SESSION_SUMMARY = "session_summary"
    # A notes file in the workspace (`.squad/agents/{agent}/memory/*.md`, `.squad/memory/*.md`).
    NOTES = "notes"


class TokenRole(models.TextChoices):
    AGENT = "agent"
    COORDINATOR = "coordinator"


class MirrorKind(models.TextChoices):
    IMPORT = "import"
    EXPORT = "export"


class EpisodeOutcome(models.TextChoices):
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    ABANDONED = "abandoned"


class EpisodeSource(models.TextChoices):
    """Who wrote an episode: the run's own agent, the Scribe after the run, or a coordinator."""

    AGENT = "agent"
    SCRIBE = "scribe"
    COORDINATOR = "coordinator"


class MemberRole(models.TextChoices):
    COORDINATOR = "coordinator"
    VIEWER = "viewer"


# Entry types that become decisions when merged; the rest become memories.
DECISION_ENTRY_TYPES = frozenset(DecisionType.values)
# Entries that become an agent's memory: private to that agent (and coordinators) unless `cross-team`.
PRIVATE_ENTRY_TYPES = (EntryType.LEARNING, EntryType.PATTERN, EntryType.UPDATE)
BOUNDARY_TYPES = (DecisionType.ARCHITECTURAL, DecisionType.SCOPE)


def _in(field: str, choices: type[models.TextChoices]) -> Q:
    return Q(**{f"{field}__in": choices.values})


class Project(models.Model):
    slug = models.SlugField(max_length=100, unique=True)
    name = models.CharField(max_length=200)
    workspace = models.CharField(
        max_length=1024,
        blank=True,
        help_text="Directory the ledger is mirrored into (.squad/, .agentweaver/).",
    )
    coordinator_agent = models.CharField(max_length=AGENT_NAME_MAX_LENGTH, default="coordinator")
    # The type given to a decision adopted from a Squad log that names none: `technical` keeps an
    # adopted log out of every agent's boundaries layer until a coordinator retypes it.
    squad_type = models.CharField(max_length=20, choices=DecisionType.choices, default=DecisionType.TECHNICAL)
    # This project's context budgets, layer by layer (docs/compiler.md "Token budget"): any of
    # `max_items`, `memory`, `relevant`, `session`, each over the site's default. Empty: the defaults.
    context_budgets = models.JSONField(default=dict, blank=True)
    # The last background export's failure, shown on the dashboard until an export succeeds.
    export_error = models.TextField(blank=True)
    export_error_at = models.DateTimeField(null=True, blank=True)
    exported_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["slug"]
        constraints = [
            models.CheckConstraint(
                condition=_in("squad_type", DecisionType), name="ledger_project_squad_type_valid"
            ),
        ]

    def __str__(self) -> str:
        return self.slug


class Agent(models.Model):
    """One agent of a project. Identity is the NFKC-normalised, case-folded name (`key`); `name` is the
    first spelling seen; `skeleton` is what the key looks like (UTS #39), so a look-alike is refused."""

    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="agents")
    key = models.CharField(max_length=AGENT_KEY_MAX_LENGTH)
    name = models.CharField(max_length=AGENT_NAME_MAX_LENGTH)
    # Blank only for a row the 0004 migration could not compute one for (a name too long once normalised).
    skeleton = models.CharField(max_length=AGENT_SKELETON_MAX_LENGTH, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project_id", "key", "id"]
        constraints = [
            models.UniqueConstraint(fields=["project", "key"], name="ledger_agent_unique_key"),
            models.CheckConstraint(condition=~Q(key=""), name="ledger_agent_key_not_empty"),
        ]
        indexes = [
            # services.agent_get_or_create: is there another agent of this project that looks the same?
            models.Index(fields=["project", "skeleton"], name="ledger_agent_skeleton"),
        ]

    def __str__(self) -> str:
        return self.name


class InboxEntry(models.Model):
    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="entries")
    agent = models.ForeignKey(Agent, on_delete=models.PROTECT, related_name="entries")
    slug = models.CharField(max_length=200)
    type = models.CharField(max_length=20, choices=EntryType.choices)
    title = models.CharField(max_length=300, blank=True)
    content = models.TextField()
    rationale = models.TextField(blank=True)
    tags = models.JSONField(default=list, blank=True)
    importance = models.CharField(max_length=10, choices=Importance.choices, default=Importance.MEDIUM)
    run_id = models.CharField(max_length=200, blank=True)
    status = models.CharField(max_length=10, choices=EntryStatus.choices, default=EntryStatus.PENDING)
    source = models.CharField(max_length=20, choices=Source.choices, default=Source.AGENT)
    decision = models.OneToOneField(
        "Decision", null=True, blank=True, on_delete=models.PROTECT, related_name="source_entry"
    )
    # Several entries may link to one memory: merging a learning its agent already holds records
    # nothing new and links the entry to that memory (docs/ledger.md "Inbox: review").
    memory = models.ForeignKey(
        "AgentMemory", null=True, blank=True, on_delete=models.PROTECT, related_name="source_entries"
    )
    merged_at = models.DateTimeField(null=True, blank=True)
    reviewed_by = models.CharField(max_length=150, blank=True)
    reviewed_at = models.DateTimeField(null=True, blank=True)
    reason = models.TextField(blank=True)
    # The file of the workspace inbox (`decisions/inbox/{file}`) that holds this entry: the one it was
    # imported from, or the one Canon wrote for it. Once set, Canon never writes another file for it.
    file = models.CharField(max_length=255, blank=True)
    # Set on insert; an adopted row takes the date its file gives it.
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "inbox entries"
        constraints = [
            models.UniqueConstraint(fields=["project", "slug"], name="ledger_inboxentry_unique_slug"),
            models.UniqueConstraint(
                fields=["project", "file"], condition=~Q(file=""), name="ledger_inboxentry_unique_file"
            ),
            models.CheckConstraint(condition=_in("type", EntryType), name="ledger_inboxentry_type_valid"),
            models.CheckConstraint(
                condition=_in("status", EntryStatus), name="ledger_inboxentry_status_valid"
            ),
            models.CheckConstraint(
                condition=_in("importance", Importance), name="ledger_inboxentry_importance_valid"
            ),
            models.CheckConstraint(condition=_in("source", Source), name="ledger_inboxentry_source_valid"),
            models.CheckConstraint(condition=~Q(slug=""), name="ledger_inboxentry_slug_not_empty"),
            # A merged entry links to exactly what it created; other entries link to nothing.
            models.CheckConstraint(
                condition=(
                    Q(status=EntryStatus.MERGED, merged_at__isnull=False)
                    & (
                        Q(decision__isnull=False, memory__isnull=True)
                        | Q(decision__isnull=True, memory__isnull=False)
                    )
                )
                | (~Q(status=EntryStatus.MERGED) & Q(decision__isnull=True, memory__isnull=True)),
                name="ledger_inboxentry_merge_link",
            ),
        ]
        indexes = [
            # Inbox lists: GET /decisions/inbox?status=… newest first, and the dashboard's review queue,
            # whose computed order (boundary types first, then oldest) is sorted from this index alone
            # (`review.views._queue_page`); the entries-by-status counts of every dashboard page.
            models.Index(
                fields=["project", "status", "created_at", "id", "type"], name="ledger_entry_review_queue"
            ),
            # Scribe: a run's pending entries of one agent.
            models.Index(fields=["project", "agent", "status", "run_id"], name="ledger_entry_agent_run"),
        ]

    def __str__(self) -> str:
        return self.slug


class Decision(models.Model):
    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="decisions")
    agent = models.ForeignKey(Agent, on_delete=models.PROTECT, related_name="decisions")
    type = models.CharField(max_length=20, choices=DecisionType.choices)
    status = models.CharField(max_length=12, choices=DecisionStatus.choices, default=DecisionStatus.ACTIVE)
    title = models.CharField(max_length=300)
    content = models.TextField()
    rationale = models.TextField(blank=True)
    tags = models.JSONField(default=list, blank=True)
    superseded_by = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="supersedes"
    )
    source = models.CharField(max_length=20, choices=Source.choices, default=Source.COORDINATOR)
    # An adopted decision's block exactly as the team wrote it, and the file it came from. The mirror
    # renders this text, never a re-rendering of the fields.
    markdown = models.TextField(blank=True)
    origin = models.CharField(max_length=1024, blank=True)
    # Tokens of this decision's block in the compiled context, counted when the row is written.
    tokens = models.PositiveIntegerField(default=0)
    # Held for review: a block someone added to a team's decision log after it was adopted. No person
    # has looked at it yet, so it reaches no agent's context (as a boundary or as relevant knowledge)
    # until a coordinator retypes or edits it.
    held = models.BooleanField(default=False)
    status_changed_at = models.DateTimeField(null=True, blank=True)
    # Set on insert; an adopted row takes the date its file gives it.
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=_in("type", DecisionType), name="ledger_decision_type_valid"),
            models.CheckConstraint(
                condition=_in("status", DecisionStatus), name="ledger_decision_status_valid"
            ),
            models.CheckConstraint(
                condition=~Q(superseded_by=F("pk")), name="ledger_decision_not_superseded_by_self"
            ),
            # Superseded exactly when it names its replacement; a decision adopted from a file as
            # superseded may not know it.
            models.CheckConstraint(
                condition=Q(status=DecisionStatus.SUPERSEDED, superseded_by__isnull=False)
                | Q(status=DecisionStatus.SUPERSEDED, superseded_by__isnull=True, source=Source.IMPORT)
                | (~Q(status=DecisionStatus.SUPERSEDED) & Q(superseded_by__isnull=True)),
                name="ledger_decision_superseded_link",
            ),
            models.CheckConstraint(condition=_in("source", Source), name="ledger_decision_source_valid"),
        ]
        indexes = [
            # Context compiler boundaries: active decisions of a project by type, oldest first.
            models.Index(
                fields=["project", "status", "type", "created_at"], name="ledger_decision_boundaries"
            ),
        ]

    def __str__(self) -> str:
        return self.title


class DecisionRevision(models.Model):
    """The text of a decision before an edit. Written once, never changed."""

    decision = models.ForeignKey(Decision, on_delete=models.PROTECT, related_name="revisions")
    title = models.CharField(max_length=300)
    content = models.TextField()
    rationale = models.TextField(blank=True)
    changed_by = models.CharField(max_length=150)
    changed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["decision_id", "changed_at", "id"]

    def __str__(self) -> str:
        return f"{self.decision_id} @ {self.changed_at:%Y-%m-%d %H:%M}"


class MemoryQuerySet(models.QuerySet["AgentMemory"]):
    """Memories. A queryset narrowed to what one agent may read (`ledger.visibility.memories_visible_to`)
    knows that agent as its `reader`, and its copies keep it: a search (`ledger.search`) then asks the
    full-text index for that agent's rows alone, through the scope words the index holds beside each
    memory's text (migration 0010), rather than scoring every agent's matches first."""

    reader: Agent | None = None

    def read_by(self, agent: Agent) -> MemoryQuerySet:
        """This queryset, known to hold only memories `agent` may read."""
        found = self.all()
        found.reader = agent
        return found

    def _clone(self) -> MemoryQuerySet:  # type: ignore[misc]  # Django's, not in the stubs
        found: MemoryQuerySet = super()._clone()  # type: ignore[misc]
        found.reader = self.reader
        return found


class AgentMemory(models.Model):
    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="memories")
    agent = models.ForeignKey(Agent, on_delete=models.PROTECT, related_name="memories")
    type = models.CharField(max_length=20, choices=MemoryType.choices)
    importance = models.CharField(max_length=10, choices=Importance.choices, default=Importance.MEDIUM)
    # 0 = high, 1 = medium, 2 = low: lets the database order by importance with an index.
    importance_rank = models.PositiveSmallIntegerField(default=1)
    content = models.TextField()
    tags = models.JSONField(default=list, blank=True)
    # ',a,b,' — whole-tag matching as a substring test that works on SQLite and PostgreSQL alike.
    tag_index = models.TextField(blank=True, editable=False)
    cross_team = models.BooleanField(default=False, editable=False)
    session_id = models.CharField(max_length=100, blank=True)
    source = models.CharField(max_length=20, choices=Source.choices, default=Source.AGENT)
    injected_by = models.CharField(max_length=150, blank=True)
    category = models.CharField(max_length=20, choices=MemoryCategory.choices, blank=True)
    # An adopted memory's entry exactly as written in the agent's history file, and that file.
    markdown = models.TextField(blank=True)
    origin = models.CharField(max_length=1024, blank=True)
    content_sha256 = models.CharField(max_length=64, editable=False)
    tokens = models.PositiveIntegerField(default=0, editable=False)
    status = models.CharField(max_length=10, choices=MemoryStatus.choices, default=MemoryStatus.ACTIVE)
    # Lifecycle (docs/ledger.md "Memory"): a pinned memory never expires and never decays; otherwise
    # `expires_at` is set from its source's time-to-live when it is written (null: never). An expired
    # memory keeps status `active`: it is hidden from context and search, and shown as expired.
    pinned = models.BooleanField(default=False)
    expires_at = models.DateTimeField(null=True, blank=True)
    # sha256 of the normalised content (case, spacing and width folded): the same memory written
    # twice by one agent is found by this, and is kept once.
    content_key = models.CharField(max_length=64, blank=True, default="", editable=False)
    # The memory that corrects this one (status `superseded`), kept and linked.
    superseded_by = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="supersedes"
    )
    # A near-duplicate flagged for a coordinator: the earlier memory this one closely repeats, and the
    # token-set similarity (0-100). Cleared when a coordinator merges or dismisses it.
    similar_to = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.PROTECT, related_name="similar"
    )
    similarity = models.PositiveSmallIntegerField(null=True, blank=True)
    # Set on insert; an adopted row takes the date its file gives it.
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(auto_now=True)

    objects = MemoryQuerySet.as_manager()

    class Meta:
        ordering = ["-created_at", "-id"]
        verbose_name_plural = "agent memories"
        constraints = [
            models.CheckConstraint(condition=_in("type", MemoryType), name="ledger_agentmemory_type_valid"),
            models.CheckConstraint(
                condition=_in("importance", Importance), name="ledger_agentmemory_importance_valid"
            ),
            models.CheckConstraint(
                condition=Q(importance=Importance.HIGH, importance_rank=0)
                | Q(importance=Importance.MEDIUM, importance_rank=1)
                | Q(importance=Importance.LOW, importance_rank=2),
                name="ledger_agentmemory_importance_rank",
            ),
            models.CheckConstraint(
                condition=_in("status", MemoryStatus), name="ledger_agentmemory_status_valid"
            ),
            models.CheckConstraint(condition=_in("source", Source), name="ledger_agentmemory_source_valid"),
            models.CheckConstraint(
                condition=Q(category="") | _in("category", MemoryCategory),
                name="ledger_agentmemory_category_valid",
            ),
        ]
        indexes = [
            # Compiler memory layer, own candidates: one agent's active memories in compile order
            # (importance, newest first), so the read stops as soon as enough are taken.
            models.Index(
                fields=["agent", "importance_rank", "-created_at", "-id"],
                condition=Q(status=MemoryStatus.ACTIVE),
                name="ledger_memory_agent_compile",
            ),
            # Compiler memory layer, cross-team candidates: a project's active cross-team memories in
            # compile order.
            models.Index(
                fields=["project", "importance_rank", "-created_at", "-id"],
                condition=Q(status=MemoryStatus.ACTIVE, cross_team=True),
                name="ledger_memory_crossteam",
            ),
            # Memory search and lists: a project's memories, newest first (status is filtered on the
            # way; leading with it would tempt SQLite's planner away from the compile indexes above).
            models.Index(fields=["project", "-created_at", "-id"], name="ledger_memory_project_list"),
            # Consolidation: an agent's memory with this normalised content.
            models.Index(fields=["agent", "content_key"], name="ledger_memory_content_key"),
            # The coordinator's queue of flagged near-duplicates.
            models.Index(
                fields=["project", "-created_at"],
                condition=Q(similar_to__isnull=False),
                name="ledger_memory_near_duplicates",
            ),
        ]

    def __str__(self) -> str:
        return f"[{self.type}] {self.content[:60]}"

    @property
    def expired(self) -> bool:
        return self.expires_at is not None and self.expires_at <= timezone.now()


class Session(models.Model):
    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="sessions")
    session_id = models.CharField(max_length=100)
    focus_area = models.TextField(blank=True)
    active_issues = models.JSONField(default=list, blank=True)
    summary = models.TextField(blank=True)
    serialized_state = models.JSONField(null=True, blank=True)
    # Who wrote the text every agent of the project reads (docs/ledger.md "Sessions"): the agent or
    # coordinator that last set the focus and the issues, and everyone who wrote the summary, in order.
    focus_by = models.CharField(max_length=150, blank=True)
    issues_by = models.CharField(max_length=150, blank=True)
    summary_by = models.JSONField(default=list, blank=True)
    # Tokens of this session's block in the compiled context, counted when the row is written.
    tokens = models.PositiveIntegerField(default=0)
    started_at = models.DateTimeField(auto_now_add=True)
    ended_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-started_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["project", "session_id"], name="ledger_session_unique_id"),
            models.UniqueConstraint(
                fields=["project"], condition=Q(ended_at__isnull=True), name="ledger_session_one_open"
            ),
            models.CheckConstraint(condition=~Q(session_id=""), name="ledger_session_id_not_empty"),
        ]

    def __str__(self) -> str:
        return self.session_id

    @property
    def is_open(self) -> bool:
        return self.ended_at is None


class ApiToken(models.Model):
    """A bearer token. Only the SHA-256 of the secret is stored."""

    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="tokens")
    role = models.CharField(max_length=12, choices=TokenRole.choices)
    agent = models.ForeignKey(Agent, null=True, blank=True, on_delete=models.PROTECT, related_name="tokens")
    token_hash = models.CharField(max_length=64, unique=True, editable=False)
    prefix = models.CharField(
        max_length=12, editable=False, help_text="First characters, to tell tokens apart."
    )
    label = models.CharField(max_length=200, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)
    revoked_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        ordering = ["project_id", "-created_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=_in("role", TokenRole), name="ledger_apitoken_role_valid"),
            # An agent token acts as exactly one agent; a coordinator token as the whole project.
            models.CheckConstraint(
                condition=Q(role=TokenRole.AGENT, agent__isnull=False)
                | Q(role=TokenRole.COORDINATOR, agent__isnull=True),
                name="ledger_apitoken_agent_matches_role",
            ),
        ]

    def __str__(self) -> str:
        return f"{self.prefix}… ({self.role})"

    @staticmethod
    def hash_secret(secret: str) -> str:
        """What is stored of a token's secret, and what a presented secret is looked up by."""
        return hashlib.sha256(secret.encode("utf-8")).hexdigest()


class Episode(models.Model):
    """What one agent's run tried and how it ended, with its notes, kept whatever the outcome.

    One per run of an agent: a second report of the same run updates it, and a runtime's own report
    replaces the minimal one the Scribe writes for a run that has none.
    """

    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="episodes")
    agent = models.ForeignKey(Agent, on_delete=models.PROTECT, related_name="episodes")
    run_id = models.CharField(max_length=200)  # services.RUN_ID_MAX_LENGTH
    outcome = models.CharField(max_length=10, choices=EpisodeOutcome.choices)
    tried = models.TextField()
    # The paths the run touched, a list of strings.
    files = models.JSONField(default=list, blank=True)
    change_url = models.URLField(max_length=2048, blank=True)
    difficulties = models.TextField(blank=True)
    feedback = models.TextField(blank=True)
    source = models.CharField(max_length=12, choices=EpisodeSource.choices, default=EpisodeSource.AGENT)
    # Tokens of the episode's text (tried, difficulties, feedback, files), counted when it is written.
    tokens = models.PositiveIntegerField(default=0, editable=False)
    created_at = models.DateTimeField(default=timezone.now, editable=False)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.UniqueConstraint(fields=["project", "agent", "run_id"], name="ledger_episode_unique_run"),
            models.CheckConstraint(condition=~Q(run_id=""), name="ledger_episode_run_id_not_empty"),
            models.CheckConstraint(
                condition=_in("outcome", EpisodeOutcome), name="ledger_episode_outcome_valid"
            ),
            models.CheckConstraint(
                condition=_in("source", EpisodeSource), name="ledger_episode_source_valid"
            ),
        ]
        indexes = [
            # GET /episodes: a project's episodes, newest first.
            models.Index(fields=["project", "-created_at", "-id"], name="ledger_episode_project_list"),
        ]

    def __str__(self) -> str:
        return f"{self.run_id} by {self.agent_id}: {self.outcome}"


class Compilation(models.Model):
    """What one agent was told for one run: the audit record of a compiled context block."""

    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="compilations")
    agent = models.ForeignKey(Agent, on_delete=models.PROTECT, related_name="compilations")
    run_id = models.CharField(max_length=200)
    child = models.BooleanField(default=False)
    text = models.TextField(blank=True)
    sha256 = models.CharField(max_length=64, blank=True)
    tokens = models.PositiveIntegerField(default=0)
    layers = models.JSONField(default=dict, blank=True)
    decisions = models.ManyToManyField(Decision, blank=True, related_name="compilations")
    memories = models.ManyToManyField(AgentMemory, blank=True, related_name="compilations")
    session = models.ForeignKey(
        Session, null=True, blank=True, on_delete=models.PROTECT, related_name="compilations"
    )
    skipped_ids = models.JSONField(default=list, blank=True)
    episodes = models.ManyToManyField(Episode, blank=True, related_name="compilations")
    max_items = models.PositiveIntegerField()
    max_tokens = models.PositiveIntegerField()
    # The task the relevant-knowledge layer was chosen for (blank: none), and every layer's budget.
    task = models.TextField(blank=True)
    budgets = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            # "What was agent X told in run R".
            models.Index(fields=["project", "agent", "run_id"], name="ledger_compilation_run"),
            # Dashboard: a project's compilations, newest first.
            models.Index(fields=["project", "created_at"], name="ledger_compilation_recent"),
        ]

    def __str__(self) -> str:
        return f"{self.run_id} → {self.agent_id}"


class Membership(models.Model):
    """A dashboard user's role in one project."""

    user = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memberships")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="memberships")
    role = models.CharField(max_length=12, choices=MemberRole.choices)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["project_id", "user_id"]
        constraints = [
            models.UniqueConstraint(fields=["user", "project"], name="ledger_membership_unique"),
            models.CheckConstraint(condition=_in("role", MemberRole), name="ledger_membership_role_valid"),
        ]

    def __str__(self) -> str:
        return f"{self.user} in {self.project} ({self.role})"


class AuditEvent(models.Model):
    """One reviewer action: who did what to which object, from which state to which."""

    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="audit_events")
    actor = models.CharField(max_length=150)
    via = models.CharField(max_length=20, help_text="api, dashboard, command, scribe, admin")
    action = models.CharField(max_length=40)
    object_type = models.CharField(max_length=20)
    object_id = models.BigIntegerField()
    from_state = models.CharField(max_length=20, blank=True)
    to_state = models.CharField(max_length=20, blank=True)
    detail = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        indexes = [
            # The trail shown on one object's page.
            models.Index(fields=["object_type", "object_id", "created_at"], name="ledger_audit_object"),
        ]

    def __str__(self) -> str:
        return f"{self.actor} {self.action} {self.object_type}#{self.object_id}"


class MirrorRun(models.Model):
    """The result of one import or export of a project's workspace, with its warnings."""

    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="mirror_runs")
    kind = models.CharField(max_length=10, choices=MirrorKind.choices)
    trigger = models.CharField(max_length=20, help_text="command, dashboard, api, background")
    ok = models.BooleanField(default=True)
    counts = models.JSONField(default=dict, blank=True)
    warnings = models.JSONField(default=list, blank=True)
    # The whole report: per file what was adopted, created, kept (and why), written, removed, backed up.
    report = models.JSONField(default=dict, blank=True)
    error = models.TextField(blank=True)
    actor = models.CharField(max_length=150, blank=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["-created_at", "-id"]
        constraints = [
            models.CheckConstraint(condition=_in("kind", MirrorKind), name="ledger_mirrorrun_kind_valid"),
        ]
        indexes = [models.Index(fields=["project", "kind", "created_at"], name="ledger_mirrorrun_recent")]

    def __str__(self) -> str:
        return f"{self.kind} {self.project_id} {'ok' if self.ok else 'failed'}"


class MirrorFile(models.Model):
    """One path of a project's workspace that Canon has written or adopted: the mirror's manifest.

    Canon owns a path when the file is absent or its bytes are exactly what Canon last wrote
    (`sha256`), was about to write when it stopped (`pending_sha256`), or last adopted into the ledger
    (`adopted_sha256`). Any other bytes are someone else's: adopted first, or left alone.
    """

    project = models.ForeignKey(Project, on_delete=models.PROTECT, related_name="mirror_files")
    path = models.CharField(max_length=1024)
    sha256 = models.CharField(max_length=64, blank=True)
    pending_sha256 = models.CharField(max_length=64, blank=True)
    adopted_sha256 = models.CharField(max_length=64, blank=True)
    adopted_at = models.DateTimeField(null=True, blank=True)
    # The copy of the team's original taken before Canon first replaced it (in CANON_DATA_DIR).
    backup = models.CharField(max_length=2048, blank=True)
    # The parts of the file Canon knows, by the sha256 of their text: {"<sha>": "decision:12"}.
    parts = models.JSONField(default=dict, blank=True)
    # Every row ever placed in the file ("decision:12"): one someone else removed is not put back.
    placed = models.JSONField(default=list, blank=True)
    agent = models.ForeignKey(
        Agent, null=True, blank=True, on_delete=models.PROTECT, related_name="mirror_files"
    )
    # What the file was rendered from at the export that last wrote or checked it (`ledger.mirror.inputs`),
    # and what the workspace showed of it then (size, modification time, inode): an export whose inputs
    # and file are both as recorded leaves the path alone. Blank: render it again.
    inputs = models.CharField(max_length=64, blank=True)
    seen = models.CharField(max_length=100, blank=True)
    # Where each row's text stands in the file Canon last wrote (`ledger.mirror.pieces`), so that the rows
    # that did not change are not rendered again: {"sha256": …, "rows": {"decision:12": [stamp, start, end]}}.
    pieces = models.JSONField(default=dict, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["project_id", "path"]
        constraints = [
            models.UniqueConstraint(fields=["project", "path"], name="ledger_mirrorfile_unique_path"),
        ]

    def __str__(self) -> str:
        return self.path

    @property
    def adopted(self) -> bool:
        return self.adopted_at is not None

    def owns(self, digest: str) -> bool:
        return digest in {self.sha256, self.pending_sha256, self.adopted_sha256} - {""}


class MirrorChunk(models.Model):
    """A piece of what the manifest knows of a big file (its parts, the rows ever placed in it, its
    pieces): a column of `MirrorFile` that holds many items keeps the digests of its chunks, and each
    chunk is stored once, named by the digest of its text (`ledger.mirror.chunks`). A write stores the
    chunks that changed, not the whole value."""

    file = models.ForeignKey(MirrorFile, on_delete=models.CASCADE, related_name="chunks")
    digest = models.CharField(max_length=32)
    text = models.TextField()

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["file", "digest"], name="ledger_mirrorchunk_unique_digest"),
        ]

    def __str__(self) -> str:
        return f"{self.digest} of {self.file_id}"


class MirrorState(models.Model):
    """Who is importing or exporting a project's workspace now: one process at a time, on any host.

    `holder` keeps the lease until `held_until`, renewing it while it works; a holder that died loses it
    when it expires (docs/mirror.md "When exports run").
    """

    project = models.OneToOneField(
        Project, on_delete=models.CASCADE, primary_key=True, related_name="mirror_state"
    )
    holder = models.CharField(max_length=64, blank=True)
    held_until = models.DateTimeField(null=True, blank=True)
    # What the last export left (`ledger.mirror.changes`): the rendering code and the team folder it
    # wrote with, and the kinds of file it must look at again whatever changed (one kept or failed).
    exported = models.JSONField(default=dict, blank=True)

    def __str__(self) -> str:
        return f"mirror of {self.project_id}: {self.holder or 'free'}"


class MirrorChange(models.Model):
    """A row the files show was written since the project's last export: added by a trigger in the
    database (migration 0019), in the write's own transaction, for every insert, update and delete of a
    decision, memory, inbox entry or session of a project that has a workspace, and for the manifest
    rows an import adopts or removes. The export reads them to render only what changed, and removes
    those it read (`ledger.mirror.changes`)."""

    # No constraint in the database: a trigger may add a row while a whole table is being emptied.
    project = models.ForeignKey(
        Project, on_delete=models.CASCADE, related_name="mirror_changes", db_constraint=False
    )
    # decision, memory, entry, session, file
    kind = models.CharField(max_length=10)
    row_id = models.BigIntegerField()

    class Meta:
        # The export reads a project's change rows, and removes them.
        indexes = [models.Index(fields=["project", "kind"], name="ledger_mirrorchange_project")]

    def __str__(self) -> str:
        return f"{self.kind} {self.row_id} of {self.project_id}"


class MirrorRequest(models.Model):
    """An export of the project is wanted and queued: written by the first write that found none, in
    that write's transaction, and removed when an export starts. Rows are only ever inserted by
    writes, never updated, so writes of one project never wait for each other here."""

    project = models.ForeignKey(Project, on_delete=models.CASCADE, related_name="mirror_requests")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["project", "created_at"], name="ledger_mirrorrequest_project")]

    def __str__(self) -> str:
        return f"export of {self.project_id} wanted since {self.created_at:%Y-%m-%d %H:%M:%S}"


class EntryRevision(models.Model):
    """The text of a pending inbox entry before a coordinator edited it. Written once, never changed.

    The entry keeps the edited text, which a merge takes; its revisions keep what the agent proposed
    (and every earlier edit), so the page can show what the coordinator changed.
    """

    entry = models.ForeignKey(InboxEntry, on_delete=models.PROTECT, related_name="revisions")
    title = models.CharField(max_length=300, blank=True)
    content = models.TextField()
    rationale = models.TextField(blank=True)
    changed_by = models.CharField(max_length=150)
    changed_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["entry_id", "changed_at", "id"]

    def __str__(self) -> str:
        return f"{self.entry_id} @ {self.changed_at:%Y-%m-%d %H:%M}"


# --- SQLite's full-text index, as Django can join it (`ledger.search`) ---


class FullTextIndex(models.TextField):
    """The hidden column an SQLite FTS5 table has under its own name: `MATCH` is asked of it, and BM25
    is given it (`ledger.search` registers the `match` lookup)."""


class _TextIndexRow(models.Model):
    """One row of an FTS5 table (migrations 0007, 0008, 0010), under the id of the row whose text it
    holds. Created and kept by the migrations' triggers, never written through Django; read only by
    `ledger.search`, and only on SQLite (PostgreSQL indexes a column of the row itself)."""

    class Meta:
        abstract = True
        managed = False

    def __str__(self) -> str:
        return str(self.pk)


class MemoryTextIndex(_TextIndexRow):
    memory = models.OneToOneField(
        AgentMemory,
        primary_key=True,
        db_column="rowid",
        on_delete=models.DO_NOTHING,
        related_name="text_index",
    )
    index = FullTextIndex(db_column="ledger_memory_fts")

    class Meta(_TextIndexRow.Meta):
        db_table = "ledger_memory_fts"


class DecisionTextIndex(_TextIndexRow):
    decision = models.OneToOneField(
        Decision, primary_key=True, db_column="rowid", on_delete=models.DO_NOTHING, related_name="text_index"
    )
    index = FullTextIndex(db_column="ledger_decision_fts")

    class Meta(_TextIndexRow.Meta):
        db_table = "ledger_decision_fts"


class EntryTextIndex(_TextIndexRow):
    entry = models.OneToOneField(
        InboxEntry,
        primary_key=True,
        db_column="rowid",
        on_delete=models.DO_NOTHING,
        related_name="text_index",
    )
    index = FullTextIndex(db_column="ledger_entry_fts")

    class Meta(_TextIndexRow.Meta):
        db_table = "ledger_entry_fts"


class EpisodeTextIndex(_TextIndexRow):
    episode = models.OneToOneField(
        Episode, primary_key=True, db_column="rowid", on_delete=models.DO_NOTHING, related_name="text_index"
    )
    index = FullTextIndex(db_column="ledger_episode_fts")

    class Meta(_TextIndexRow.Meta):
        db_table = "ledger_episode_fts"
