"""Projects, their agents and their API tokens."""

from __future__ import annotations

import secrets
from typing import Any

from django.db import IntegrityError, transaction

from ledger import visibility
from ledger.models import (
    Agent,
    ApiToken,
    DecisionType,
    Project,
    TokenRole,
)
from ledger.services.errors import Conflict, invalid
from ledger.services.fields import (
    checked_agent_name,
    checked_choice,
    checked_slug,
    checked_text,
)
from ledger.values import (
    InvalidValue,
    agent_key,
    agent_skeleton,
)


def project_create_or_update(
    *,
    slug: str,
    name: str | None = None,
    workspace: str | None = None,
    coordinator: str | None = None,
    squad_type: str | None = None,
) -> tuple[Project, bool]:
    clean_slug = checked_slug(slug)
    if clean_slug != slug:
        raise invalid("slug", f"use lower-case letters, digits and '-' only (for example {clean_slug!r})")
    defaults: dict[str, Any] = {}
    if name is not None:
        defaults["name"] = checked_text("name", name, required=True, max_length=200)
    if workspace is not None:
        defaults["workspace"] = checked_text("workspace", workspace, max_length=1024)
    if coordinator is not None:
        defaults["coordinator_agent"] = checked_agent_name(coordinator, "coordinator")
    if squad_type is not None:
        defaults["squad_type"] = checked_choice("squad_type", squad_type, DecisionType.values)
    with transaction.atomic():
        project = Project.objects.select_for_update().filter(slug=clean_slug).first()
        if project is None:
            defaults.setdefault("name", clean_slug)
            try:
                with transaction.atomic():
                    return Project.objects.create(slug=clean_slug, **defaults), True
            except IntegrityError:
                project = Project.objects.select_for_update().get(slug=clean_slug)
        for key, value in defaults.items():
            setattr(project, key, value)
        project.save()
        return project, False


def agent_get_or_create(*, project: Project, name: str, known: Agent | None = None) -> Agent:
    """The project's agent with this name in any case or width; created, spelled as given, when new.

    `known` is a row the caller holds already (a token's agent): it is the answer, without a query,
    when it is this project's agent with this name.

    A new name that looks like an existing agent's (same UTS #39 skeleton, other key: `Alice` with a
    Cyrillic `A` beside `Alice`) is a Conflict that names the existing agent: nobody can pose as
    another agent by spelling its name with look-alike letters.
    """
    display = checked_agent_name(name)
    try:
        key = agent_key(display)
    except InvalidValue as exc:
        raise invalid("agent_name", str(exc)) from exc
    if known is not None and known.project_id == project.pk and known.key == key:
        return known
    try:
        skeleton = agent_skeleton(key)
    except InvalidValue as exc:
        raise invalid("agent_name", str(exc)) from exc
    try:
        return Agent.objects.get(project=project, key=key)  # unique: no ORDER BY to build
    except Agent.DoesNotExist:
        pass
    try:
        with transaction.atomic():
            # New agents of a project are created one at a time, so two look-alikes arriving together
            # cannot both pass the skeleton check; the unique key still settles exact duplicates.
            Project.objects.select_for_update().values_list("pk").get(pk=project.pk)
            twin = Agent.objects.filter(project=project, skeleton=skeleton).exclude(key=key).first()
            if twin is not None:
                raise Conflict(
                    f"agent name {display!r} looks like the existing agent {twin.name!r}; "
                    "use that name or a clearly different one"
                )
            return Agent.objects.create(project=project, key=key, name=display, skeleton=skeleton)
    except IntegrityError:
        return Agent.objects.get(project=project, key=key)


def token_issue(
    *, project: Project, role: str, agent_name: str | None = None, label: str = ""
) -> tuple[ApiToken, str]:
    """A new bearer token. Returns the row and the secret; only the secret's hash is stored."""
    role = checked_choice("role", role, TokenRole.values)
    if role == TokenRole.AGENT and not agent_name:
        raise invalid("agent", "an agent token needs an agent name")
    if role == TokenRole.AGENT and agent_name:
        checked_agent_name(agent_name, "agent")
        refusal = visibility.agent_token_refusal(project, agent_name)
        if refusal is not None:
            raise invalid("agent", refusal)
    agent_name = agent_name or ""
    secret = "canon_" + secrets.token_urlsafe(32)
    with transaction.atomic():
        agent = agent_get_or_create(project=project, name=agent_name) if role == TokenRole.AGENT else None
        token = ApiToken.objects.create(
            project=project,
            role=role,
            agent=agent,
            token_hash=ApiToken.hash_secret(secret),
            prefix=secret[:12],
            label=checked_text("label", label, max_length=200),
        )
    return token, secret
