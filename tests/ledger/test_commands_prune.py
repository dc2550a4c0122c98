"""prune_compilations: recorded compilations are removed after CANON_COMPILATIONS_KEEP_DAYS."""

from __future__ import annotations

import json
from datetime import timedelta
from io import StringIO

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.utils import timezone

from ledger import context, services
from ledger.models import AgentMemory, Compilation, Decision


def run(*args):
    out = StringIO()
    call_command("prune_compilations", *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def told(project, other_project):
    """Six compilations: of each project, one 200 days old, one 30 days old, one of today; each told a
    boundary and a memory."""
    for where in (project, other_project):
        services.decision_create(
            project=where, agent_name="lead", type="scope", title="No PII in logs", content="x", by="lead"
        )
        services.memory_record(project=where, agent_name="Ripley", type="core_context", content="on call")
        for age in (200, 30, 0):
            context.compile(where, "Ripley", run_id=f"run-{age}")
            Compilation.objects.filter(project=where, run_id=f"run-{age}").update(
                created_at=timezone.now() - timedelta(days=age)
            )


def test_prunes_what_is_older_than_the_setting(told, project, settings):
    settings.CANON_COMPILATIONS_KEEP_DAYS = 90
    assert run("--all").startswith("removed 2 compilations")
    assert sorted(Compilation.objects.values_list("run_id", flat=True)) == [
        "run-0",
        "run-0",
        "run-30",
        "run-30",
    ]
    # What the compilations named stays.
    assert Decision.objects.count() == 2 and AgentMemory.objects.count() == 2
    assert Compilation.decisions.through.objects.count() == 4


def test_days_and_project_narrow_it(told, project):
    assert json.loads(run("--project", project.slug, "--days", "7", "--json"))["removed"] == 2
    assert Compilation.objects.filter(project=project).count() == 1
    assert Compilation.objects.exclude(project=project).count() == 3


def test_dry_run_removes_nothing(told):
    assert "would remove 4" in run("--all", "--days", "7", "--dry-run")
    assert Compilation.objects.count() == 6


@pytest.mark.parametrize("args", [("--all", "--days", "-1"), ("--project", "nope")])
def test_bad_arguments_exit_2(db, args):
    with pytest.raises(CommandError) as info:
        run(*args)
    assert info.value.returncode == 2
