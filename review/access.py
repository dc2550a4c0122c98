"""Who may see and act on which project in the dashboard (docs/dashboard.md).

Members see their projects; coordinators act, viewers read; everyone else gets 404 for everything of
a project, so its existence does not leak. Superusers see and act on every project.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from django.contrib.auth.models import AbstractBaseUser, AnonymousUser
from django.core.exceptions import PermissionDenied
from django.db.models import Model, QuerySet
from django.http import Http404, HttpRequest
from django.shortcuts import get_object_or_404

from ledger.actions.frame import Caller
from ledger.models import MemberRole, Membership, Project

M = TypeVar("M", bound=Model)


@dataclass
class ProjectAccess:
    project: Project
    role: str
    username: str = ""

    @property
    def can_act(self) -> bool:
        return self.role == MemberRole.COORDINATOR

    @property
    def caller(self) -> Caller:
        """The coordinator the ledger's actions act for (`ledger.actions`), audited `via` dashboard;
        PermissionDenied for a viewer."""
        if not self.can_act:
            raise PermissionDenied("viewers can read this project but not change it")
        return Caller.coordinator_person(self.project, self.username)


def projects_for(user: AbstractBaseUser | AnonymousUser) -> QuerySet[Project]:
    if getattr(user, "is_superuser", False):
        return Project.objects.all()
    return Project.objects.filter(memberships__user_id=user.pk or 0)


def project_for_user(request: HttpRequest, slug: str, *, act: bool = False) -> ProjectAccess:
    """The project for a member (Http404 for anyone else); PermissionDenied when a viewer tries to act."""
    user = request.user
    project = Project.objects.filter(slug=slug).first()
    if project is None:
        raise Http404("no such project")
    role: str | None = MemberRole.COORDINATOR
    if not getattr(user, "is_superuser", False):
        memberships = Membership.objects.filter(project=project, user_id=user.pk or 0)
        role = memberships.values_list("role", flat=True).first()
    if role is None:
        raise Http404("no such project")
    access = ProjectAccess(project=project, role=role, username=user.get_username())
    if act and not access.can_act:
        raise PermissionDenied("viewers can read this project but not change it")
    return access


def in_project(access: ProjectAccess, rows: type[M] | QuerySet[M], pk: int) -> M:
    """Row `pk` of the project the reviewer is in; Http404 for a row of any other project, as for a
    project they are not a member of."""
    return get_object_or_404(rows, project=access.project, pk=pk)
