"""The MCP clients people point at Canon, run from its tests: the MCP Inspector's CLI and the official
TypeScript SDK's client, at the versions tests/mcp_clients/package.json pins.

`make mcp-clients` installs them, with the Node 22 the Inspector needs, into a folder outside the checkout
(MCP_CLIENTS, by default `~/.cache/canon/mcp-clients-{cksum of package-lock.json}`).

- `inspector(target, method, ...)` runs `mcp-inspector --cli` once, as a person types it: one connection,
  one method, its JSON printed. The target is a URL (Streamable HTTP, with `--header`) or a command
  (stdio, the token passed with `-e`).
- `sdk_plan(sessions, steps)` runs `sdk_driver.mjs`, the SDK's `Client` over either transport, through a
  plan of calls in one Node process, and returns what each answered.
"""

from __future__ import annotations

import json
import os
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
LOCK = HERE / "package-lock.json"
PINS: dict[str, str] = json.loads((HERE / "package.json").read_text(encoding="utf-8"))["dependencies"]
INSPECTOR = "@modelcontextprotocol/inspector"
SDK = "@modelcontextprotocol/sdk"
DRIVER = HERE / "sdk_driver.mjs"
# The Inspector declares Node 22.7.5 or later.
NODE_AT_LEAST = (22, 7, 5)
# Seconds one client run may take before the test gives up on it.
TIMEOUT = 120


class ClientError(Exception):
    """A client could not run, or ran longer than TIMEOUT; the message says which, with its output."""


def tools_folder() -> Path:
    """Where `make mcp-clients` installed the clients: MCP_CLIENTS, else the Makefile's default for the lock."""
    configured = os.environ.get("MCP_CLIENTS")
    if configured:
        return Path(configured)
    checksum = subprocess.run(["cksum", str(LOCK)], capture_output=True, text=True, check=True).stdout
    return Path.home() / ".cache" / "canon" / f"mcp-clients-{checksum.split()[0]}"


def bin_folder() -> Path:
    return tools_folder() / "node_modules" / ".bin"


def installed_version(package: str) -> str | None:
    manifest = tools_folder() / "node_modules" / package / "package.json"
    if not manifest.is_file():
        return None
    return str(json.loads(manifest.read_text(encoding="utf-8"))["version"])


def node_version() -> tuple[int, ...]:
    done = subprocess.run(
        [str(bin_folder() / "node"), "--version"], capture_output=True, text=True, timeout=30, check=True
    )
    return tuple(int(part) for part in done.stdout.strip().lstrip("v").split("."))


def missing() -> str | None:
    """Why the clients cannot run here (with what to do about it), or None when the pinned ones are."""
    folder = tools_folder()
    if not (folder / ".installed").is_file() or not (bin_folder() / "node").is_file():
        return f"the MCP clients are not installed in {folder}: run `make mcp-clients`"
    found = {package: installed_version(package) for package in (INSPECTOR, SDK)}
    wanted = {package: PINS[package] for package in (INSPECTOR, SDK)}
    if found != wanted:
        return f"{found} is installed in {folder}, not {wanted}: run `make mcp-clients`"
    if node_version() < NODE_AT_LEAST:
        return f"the Inspector needs Node {'.'.join(map(str, NODE_AT_LEAST))} or later in {folder}"
    return None


def environment(base: dict[str, str]) -> dict[str, str]:
    """`base` with the installed Node first on PATH: the Inspector starts its CLI as `node`."""
    return {**base, "PATH": f"{bin_folder()}{os.pathsep}{base.get('PATH', os.defpath)}"}


@dataclass
class Printed:
    """What one Inspector run did: its exit code, its stdout read as JSON (None if it was not) and stderr."""

    code: int
    answer: Any
    stderr: str


def inspector(
    target: list[str],
    method: str,
    *,
    env: dict[str, str],
    server_env: dict[str, str] | None = None,
    headers: dict[str, str] | None = None,
    tool: str | None = None,
    arguments: dict[str, str] | None = None,
) -> Printed:
    """`mcp-inspector --cli [-e K=V] [URL --transport http --header 'K: V'] TARGET --method METHOD
    [--tool-name NAME --tool-arg k=v ...]`: the Inspector reads each `k=v` value as JSON when it parses,
    else as text, and converts text to the type the tool's schema gives."""
    command = [str(bin_folder() / "mcp-inspector"), "--cli"]
    for name, value in (server_env or {}).items():
        command += ["-e", f"{name}={value}"]
    command += target
    if headers is not None:
        command += ["--transport", "http"]
        for name, value in headers.items():
            command += ["--header", f"{name}: {value}"]
    command += ["--method", method]
    if tool is not None:
        command += ["--tool-name", tool]
    if arguments:
        command += ["--tool-arg", *(f"{key}={value}" for key, value in arguments.items())]
    try:
        done = subprocess.run(command, env=environment(env), capture_output=True, text=True, timeout=TIMEOUT)
    except subprocess.TimeoutExpired as exc:
        raise ClientError(f"the Inspector ran over {TIMEOUT} s: {command[2:]}\n{exc.stderr!r}") from None
    try:
        answer = json.loads(done.stdout)
    except json.JSONDecodeError:
        answer = None
    return Printed(code=done.returncode, answer=answer, stderr=done.stderr)


def sdk_plan(sessions: dict[str, Any], steps: list[dict[str, Any]], *, env: dict[str, str]) -> dict[str, Any]:
    """Run the plan through the TypeScript SDK's client (sdk_driver.mjs says its format); its answer."""
    plan = json.dumps({"sessions": sessions, "steps": steps})
    try:
        done = subprocess.run(
            [str(bin_folder() / "node"), str(DRIVER), str(tools_folder())],
            input=plan,
            env=environment(env),
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
        )
    except subprocess.TimeoutExpired as exc:
        raise ClientError(f"the SDK's driver ran over {TIMEOUT} s\n{exc.stderr!r}") from None
    if done.returncode != 0:
        raise ClientError(f"the SDK's driver failed (exit {done.returncode}):\n{done.stderr[-4000:]}")
    answer: dict[str, Any] = json.loads(done.stdout)
    return answer
