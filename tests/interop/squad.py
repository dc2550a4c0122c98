"""The published Squad program (squad-cli 0.10.0, squad-sdk 0.13.1), run from Canon's tests.

`make squad-tools` installs it, with the Node 22 it needs, into a folder outside the checkout (SQUAD_TOOLS,
by default `~/.cache/canon/squad-{cksum of package-lock.json}`). Each function here runs Squad's own code:

- readers (`parse_decisions`, `split_entries`, `parse_history`) and the agents' tools (`decide`, `memory`)
  and casting (`cast`) go through one Node process per test process (`squad_driver.mjs`);
- the CLI commands (`init`, `memory_write_decision`, `nap`, `scrub_emails`, `doctor`, `status`) run as
  `squad …` in the team's folder, as a person would run them.

Every failure raises SquadError with what Squad printed on stderr. Squad runs with a home folder of its
own, so nothing it caches reaches the user's.
"""

from __future__ import annotations

import atexit
import json
import os
import re
import select
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
LOCK = HERE / "package-lock.json"
DRIVER = HERE / "squad_driver.mjs"
CLI_VERSION = "0.10.0"
SDK_VERSION = "0.13.1"
# Seconds one Squad command or driver call may take before the tests give up on it.
TIMEOUT = 60
_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_ANSWER = b"\x1e"


class SquadError(Exception):
    """Squad refused an operation or failed; the message says which, with Squad's stderr."""


def tools_folder() -> Path:
    """Where `make squad-tools` installed Squad: SQUAD_TOOLS, else the Makefile's default for this lock."""
    configured = os.environ.get("SQUAD_TOOLS")
    if configured:
        return Path(configured)
    checksum = subprocess.run(["cksum", str(LOCK)], capture_output=True, text=True, check=True).stdout
    return Path.home() / ".cache" / "canon" / f"squad-{checksum.split()[0]}"


def node() -> Path:
    return tools_folder() / "node_modules" / ".bin" / "node"


def cli_entry() -> Path:
    return tools_folder() / "node_modules" / "@bradygaster" / "squad-cli" / "dist" / "cli-entry.js"


def missing() -> str | None:
    """Why Squad cannot run here (with what to do about it), or None when it is installed."""
    folder = tools_folder()
    if (folder / ".installed").is_file() and node().is_file() and cli_entry().is_file():
        return None
    return (
        f"Squad is not installed in {folder}: run `make squad-tools` (the interop tests run the real Squad)"
    )


_home: Path | None = None


def _environment() -> dict[str, str]:
    """The environment Squad runs in: a home folder of its own, no colours, no update check, and none of
    the caller's SQUAD_* settings (SQUAD_TEAM_ROOT would point Squad at another team)."""
    global _home
    if _home is None:
        _home = Path(tempfile.mkdtemp(prefix="squad-home-"))
        atexit.register(shutil.rmtree, _home, ignore_errors=True)
    env = {key: value for key, value in os.environ.items() if not key.startswith("SQUAD_")}
    env.update(
        HOME=str(_home),
        XDG_CONFIG_HOME=str(_home / ".config"),
        NO_COLOR="1",
        SQUAD_NO_UPDATE_CHECK="1",
    )
    return env


# ---------------------------------------------------------------------------------------------
# The driver: Squad's SDK functions in one Node process


class _Driver:
    """One `node squad_driver.mjs` process: a JSON request per line in, a JSON answer per line out."""

    def __init__(self) -> None:
        reason = missing()
        if reason:
            raise SquadError(reason)
        env = _environment()
        self.log = Path(env["HOME"]) / f"driver-{os.getpid()}.stderr"
        stderr = os.open(self.log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            self.process = subprocess.Popen(
                [str(node()), str(DRIVER), str(tools_folder())],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                env=env,
            )
        finally:
            os.close(stderr)
        self.last_id = 0
        self.pending = b""

    def errors(self) -> str:
        """The end of what Squad printed on stderr so far."""
        return self.log.read_text(encoding="utf-8", errors="replace")[-4000:]

    def _line(self, op: str) -> bytes:
        """The driver's next line of output, waiting at most TIMEOUT seconds for it."""
        assert self.process.stdout is not None
        deadline = time.monotonic() + TIMEOUT
        while b"\n" not in self.pending:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self.process.stdout], [], [], left)[0]:
                self.process.kill()
                raise SquadError(f"Squad's driver gave no answer to {op} in {TIMEOUT} s:\n{self.errors()}")
            chunk = os.read(self.process.stdout.fileno(), 65536)
            if not chunk:
                raise SquadError(f"Squad's driver stopped during {op}:\n{self.errors()}")
            self.pending += chunk
        line, _, self.pending = self.pending.partition(b"\n")
        return line

    def call(self, op: str, **args: Any) -> Any:
        """The result of operation `op` of the driver; SquadError when Squad failed."""
        assert self.process.stdin is not None
        self.last_id += 1
        request = {"id": self.last_id, "op": op, "args": args}
        try:
            self.process.stdin.write(json.dumps(request).encode("utf-8") + b"\n")
            self.process.stdin.flush()
        except BrokenPipeError:
            raise SquadError(f"Squad's driver stopped before {op}:\n{self.errors()}") from None
        line = self._line(op)
        while not line.startswith(_ANSWER):
            line = self._line(op)
        answer = json.loads(line[len(_ANSWER) :].decode("utf-8"))
        if answer.get("id") != self.last_id:
            raise SquadError(f"Squad's driver answered request {answer.get('id')}, not {self.last_id}")
        if not answer["ok"]:
            raise SquadError(f"Squad's {op} failed: {answer['error']}\n{self.errors()}")
        return answer["result"]

    def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()


_driver: _Driver | None = None


def _call(op: str, **args: Any) -> Any:
    global _driver
    if _driver is None or _driver.process.poll() is not None:
        _driver = _Driver()
        atexit.register(_driver.close)
    return _driver.call(op, **args)


def iso(moment: datetime) -> str:
    """`moment` as the ISO time the `now` arguments take (what Squad's clock reads, to the second)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def versions() -> dict[str, str]:
    """The versions actually running: {"node", "cli", "sdk"}."""
    return dict(_call("versions"))


def parse_decisions(text: str) -> list[dict[str, Any]]:
    """Squad's `parseDecisionsMarkdown`: one dict per decision it reads (title, body, date, author,
    headingLevel, configRelevant; date and author only when it finds them)."""
    return list(_call("parseDecisions", text=text))


def split_entries(text: str, level: int = 3) -> dict[str, Any]:
    """Squad's `splitEntries` (its archival reader): {"preamble": str, "entries": [{"heading", "text"}]}."""
    return dict(_call("splitEntries", text=text, level=level))


def parse_history(text: str) -> dict[str, str]:
    """Squad's `parseHistory`: the text of each section it reads (context, learnings, decisions, patterns,
    issues, references), plus `fullContent`."""
    return dict(_call("parseHistory", text=text))


def decide(
    root: Path,
    author: str,
    summary: str,
    body: str,
    *,
    references: list[str] | None = None,
    now: str | None = None,
) -> Path:
    """Squad's `squad_decide` tool, as its tool registry runs it (the registry `squad state-mcp` builds
    for the team's root and storage); `now` (ISO time) is the clock it reads. Returns the inbox file."""
    args: dict[str, Any] = {"author": author, "summary": summary, "body": body}
    if references:
        args["references"] = references
    result = _call("tool", root=str(root), name="squad_decide", args=args, now=now)
    return Path(result["toolTelemetry"]["filename"])


def memory(root: Path, agent: str, section: str, content: str, *, now: str | None = None) -> None:
    """Squad's `squad_memory` tool (`section`: learnings, updates or sessions), as the SDK wires it with a
    SquadState over the team's storage; `now` (ISO time) is the clock it reads."""
    args = {"agent": agent, "section": section, "content": content}
    _call("tool", root=str(root), name="squad_memory", args=args, state=True, now=now)


def cast(root: Path, project: str, members: list[dict[str, str]], *, now: str | None = None) -> list[str]:
    """Squad's casting (`createTeam`): a folder per member (`name`, `role`, `scope`, `emoji`), plus Scribe,
    Ralph and Rai, each in `agents/{lower-case name}/`. Returns the names created."""
    result = _call("cast", root=str(root), members=members, project=project, now=now)
    return list(result["membersCreated"])


# ---------------------------------------------------------------------------------------------
# The CLI


@dataclass
class Run:
    """One `squad …` command: its exit code and what it printed (colours removed)."""

    code: int
    stdout: str
    stderr: str


def run(root: Path, *args: str, check: bool = True) -> Run:
    """`squad {args}` in `root` with the pinned Node. SquadError when it exits non-zero and `check`."""
    reason = missing()
    if reason:
        raise SquadError(reason)
    done = subprocess.run(
        [str(node()), str(cli_entry()), *args],
        cwd=root,
        env=_environment(),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=TIMEOUT,
    )
    result = Run(
        code=done.returncode,
        stdout=_ANSI.sub("", done.stdout.decode("utf-8", "replace")),
        stderr=_ANSI.sub("", done.stderr.decode("utf-8", "replace")),
    )
    if check and result.code != 0:
        raise SquadError(f"`squad {' '.join(args)}` exited {result.code}:\n{result.stderr}\n{result.stdout}")
    return result


def init(root: Path) -> Run:
    """`squad init --no-workflows`: a new team's `.squad/` folder, as Squad creates it."""
    return run(root, "init", "--no-workflows")


def memory_write_decision(root: Path, *, title: str, author: str, content: str) -> Path:
    """`squad memory write --class DECISION`: a proposal in the inbox, with Squad's front matter. Returns
    the file it wrote."""
    result = run(
        root,
        "memory",
        "write",
        "--class",
        "DECISION",
        "--title",
        title,
        "--author",
        author,
        "--content",
        content,
    )
    written = json.loads(result.stdout)
    if not written.get("stored"):
        raise SquadError(f"`squad memory write` stored nothing: {result.stdout}")
    return root / written["path"]


def nap(root: Path) -> str:
    """`squad nap`: inbox files appended to decisions.md, old blocks archived, long histories compressed."""
    return run(root, "nap").stdout


def scrub_emails(root: Path, folder: str = ".squad") -> str:
    """`squad scrub-emails {folder}`: e-mail addresses replaced in the team's files."""
    return run(root, "scrub-emails", folder).stdout


@dataclass
class Doctor:
    """`squad doctor`: its exit code and the names of the checks that passed and failed."""

    code: int
    passed: frozenset[str]
    failed: frozenset[str]
    output: str


_CHECK = re.compile(r"^(✅|❌)\s+(.+?) — ", re.MULTILINE)
_SUMMARY = re.compile(r"^Summary: (\d+) passed, (\d+) failed", re.MULTILINE)


def doctor(root: Path) -> Doctor:
    """Runs `squad doctor` in `root`. Green is exit code 0, no failed check, and the summary line."""
    result = run(root, "doctor", check=False)
    checks = _CHECK.findall(result.stdout)
    summary = _SUMMARY.search(result.stdout)
    failed = frozenset(name for mark, name in checks if mark == "❌")
    if summary is None:
        failed |= {"(no summary line)"}
    elif int(summary.group(2)) != len([m for m, _ in checks if m == "❌"]):
        failed |= {"(summary disagrees with the checks)"}
    return Doctor(
        code=result.code,
        passed=frozenset(name for mark, name in checks if mark == "✅"),
        failed=failed,
        output=result.stdout + result.stderr,
    )


def status(root: Path) -> Run:
    """`squad status` in `root` (not checked: the caller decides what it must say)."""
    return run(root, "status", check=False)
