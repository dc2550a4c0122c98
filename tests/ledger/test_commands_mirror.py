"""import_ledger, export_ledger, sync_ledger and scribe as cron runs them (docs/commands.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from io import StringIO
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError

from ledger import services
from ledger.models import AgentMemory, Decision, InboxEntry, Project

GOOD = "---\nagent: Dave\nslug: a\ntype: scope\ntitle: A\n---\nBody.\n"


@pytest.fixture
def workspace(project, tmp_path):
    project.workspace = str(tmp_path)
    project.save()
    inbox = tmp_path / ".squad/decisions/inbox"
    inbox.mkdir(parents=True)
    (inbox / "a.md").write_text(GOOD)
    return tmp_path


def run(*args):
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def test_sync_imports_then_exports_with_one_summary_line(workspace):
    output = run("sync_ledger", "--project", "alpha")
    assert output.splitlines()[0].startswith("alpha: import: 1 created")
    assert "export: " in output
    assert (workspace / ".squad/decisions.md").exists()
    assert InboxEntry.objects.get().source == "import"


def test_json_summary(workspace):
    summary = json.loads(run("sync_ledger", "--all", "--json"))
    assert summary["alpha"]["import"]["created"] == ["a"]
    assert summary["alpha"]["export"]["ok"] is True


def test_dry_run_changes_nothing(workspace):
    output = run("sync_ledger", "--project", "alpha", "--dry-run")
    assert output.startswith("[dry run] alpha: import: 1 would be created")
    assert not InboxEntry.objects.exists()
    assert not (workspace / ".squad/decisions.md").exists()


def test_warnings_are_not_failures(workspace):
    (workspace / ".squad/decisions/inbox/bad.md").write_text("---\nagent: [unclosed\n---\nx\n")
    output = run("import_ledger", "--project", "alpha")
    assert "warning: .squad/decisions/inbox/bad.md: front matter is not valid YAML" in output


def test_missing_workspace_exits_1_with_a_clear_error(project, tmp_path):
    project.workspace = str(tmp_path / "gone")
    project.save()
    with pytest.raises(CommandError) as info:
        run("export_ledger", "--project", "alpha")
    assert info.value.returncode == 1


@pytest.mark.parametrize("args", [[], ["--project", "alpha", "--all"], ["--project", "nope"]])
def test_bad_arguments_exit_2(project, args):
    with pytest.raises(CommandError) as info:
        call_command("export_ledger", *args, stdout=StringIO())
    assert (
        info.value.returncode == 2
        or "one of the arguments" in str(info.value)
        or "not allowed" in str(info.value)
    )


def test_exit_codes_from_the_shell(tmp_path):
    """What cron sees: a real process, quiet output, 0 / 1 / 2."""
    env = {
        **os.environ,
        "DATABASE_URL": f"sqlite:///{tmp_path}/cron.sqlite3",
        "CANON_EXPORT_ON_WRITE": "false",
    }
    manage = [sys.executable, str(Path(settings.BASE_DIR) / "manage.py")]

    def call(*args):
        return subprocess.run([*manage, *args], env=env, capture_output=True, text=True, timeout=120)

    assert call("migrate", "-v0").returncode == 0
    workspace = tmp_path / "ws"
    workspace.mkdir()
    assert call("create_project", "p", "--workspace", str(workspace)).returncode == 0
    ok = call("sync_ledger", "--all")
    assert ok.returncode == 0 and ok.stdout.startswith("p: import: 0 created") and "\r" not in ok.stdout
    assert call("export_ledger").returncode == 2
    assert call("create_project", "p", "--workspace", str(tmp_path / "gone")).returncode == 0
    failed = call("export_ledger", "--project", "p")
    assert failed.returncode == 1 and "does not exist" in failed.stdout


def test_scribe_command(project):
    services.entry_submit(
        project=project, agent_name="Alice", slug="l", type="learning", content="x", run_id="r1"
    )
    services.entry_submit(
        project=project, agent_name="Alice", slug="a", type="scope", content="x", run_id="r1"
    )
    dry = run(
        "scribe",
        "--project",
        "alpha",
        "--agent",
        "Alice",
        "--run-id",
        "r1",
        "--started-at",
        "2020-01-01T00:00:00Z",
        "--dry-run",
    )
    assert dry.startswith("[dry run] would merge 1, 1 need review: a")
    assert not InboxEntry.objects.filter(status="merged").exists()
    body = json.loads(
        run(
            "scribe",
            "--project",
            "alpha",
            "--agent",
            "Alice",
            "--run-id",
            "r1",
            "--started-at",
            "2020-01-01T00:00:00Z",
            "--json",
        )
    )
    assert [e["slug"] for e in body["merged"]] == ["l"]


@pytest.mark.parametrize("started", ["not-a-time", "2020-01-01T00:00:00"])
def test_scribe_command_bad_time_exits_2(project, started):
    with pytest.raises(CommandError) as info:
        run("scribe", "--project", "alpha", "--agent", "Alice", "--run-id", "r1", "--started-at", started)
    assert info.value.returncode == 2


def test_sync_reports_each_adopted_and_kept_file(project, tmp_path):
    project.workspace = str(tmp_path)
    project.save()
    squad = tmp_path / ".squad"
    (squad / "agents/marlow").mkdir(parents=True)
    (squad / "decisions.md").write_text(
        "# Squad Decisions\n\n### 2026-03-02: Use queues\n**By:** Marlow\n\nYes.\n"
    )
    (squad / "agents/marlow/history.md").write_text("## Learnings\n\n- Retries need jitter.\n")
    dry = run("sync_ledger", "--project", "alpha", "--dry-run")
    assert "adopted: .squad/decisions.md: would adopt 1 decision block" in dry
    assert "kept: .squad/decisions.md: the team's file: the next sync adopts it" in dry
    assert not Decision.objects.exists()
    summary = json.loads(run("sync_ledger", "--project", "alpha", "--json"))["alpha"]
    assert summary["import"]["adopted"] == [
        {"path": ".squad/decisions.md", "what": "1 decision adopted"},
        {"path": ".squad/agents/marlow/history.md", "what": "1 memory adopted"},
    ]
    assert summary["export"]["kept"] == [] and summary["export"]["backed_up"] == []
    assert (squad / "decisions.md").read_text().endswith("Yes.\n")


def test_create_project_sets_the_type_of_adopted_decisions(db):
    run("create_project", "gamma", "--squad-type", "process")
    assert Project.objects.get(slug="gamma").squad_type == "process"
    with pytest.raises(CommandError):
        run("create_project", "gamma", "--squad-type", "opinion")


def test_export_full_renders_every_file_again(workspace):
    run("sync_ledger", "--project", "alpha")
    project = Project.objects.get(slug="alpha")
    memory = services.memory_record(project=project, agent_name="Dave", type="learning", content="Before.")
    run("export_ledger", "--project", "alpha")
    history = workspace / ".squad/agents/dave/history.md"
    # Changed as no service changes a row (its modification time left as it was): its text looks the same.
    AgentMemory.objects.filter(pk=memory.pk).update(content="After.")
    summary = json.loads(run("export_ledger", "--project", "alpha", "--json"))["alpha"]["export"]
    assert summary["written"] == [] and "Before." in history.read_text()
    summary = json.loads(run("export_ledger", "--project", "alpha", "--json", "--full"))["alpha"]["export"]
    assert summary["written"] == [".squad/agents/dave/history.md"] and summary["unchanged"] >= 1
    assert "After." in history.read_text()
    assert (workspace / ".squad/decisions/inbox/a.md").read_text() == GOOD
