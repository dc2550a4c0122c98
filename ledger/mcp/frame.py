"""The frame every MCP tool runs in (docs/mcp.md): the registry the server lists, what each tool tells a
host about itself, who is asking, the write limit, and every refusal as a tool error.

A tool is a module-level function of `ledger.mcp.tools` whose first parameter is the caller and whose
docstring is its one-line description; `@tool` registers it with its title, its output shape and what it
does to the ledger. `bind` makes the function the SDK calls: the caller learnt from the call
(`caller_of(ctx)`: stdio's fixed token, HTTP's request token), a coordinator's tool refusing any other
token, one write counted for an agent token before every tool that is not read-only, and the answer as
structured content beside its text.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Annotated, Any, TypeVar

import pydantic_core
from django.db import close_old_connections
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp_types import CallToolResult, TextContent, ToolAnnotations
from pydantic import BaseModel, Field, ValidationError

from ledger import services
from ledger.actions.frame import ApiRefusal, Caller
from ledger.services import LedgerError
from ledger.values import InvalidValue, check_json, check_text

R = TypeVar("R")

# The transport every write through these tools is audited with.
VIA = "mcp"

CallerOf = Callable[[Context], Caller]
Answer = dict[str, Any]


@dataclass(frozen=True)
class ToolSpec:
    """One tool as the server lists it.

    `read_only`: it changes nothing (`readOnlyHint`, and idempotent). Any other tool writes, and an
    agent token's call counts one write against CANON_AGENT_WRITES_PER_MINUTE before it runs, unless
    `write_when` names the argument that makes the call a write, whose action counts it then.
    `destructive`: it can replace or end what is there (`destructiveHint`). `idempotent`: the same call
    again changes nothing more (`idempotentHint`). `coordinator`: any other token is refused, before a
    write is counted. `text`: the answer's text content, when it is not its JSON. `setting`: the
    setting that lists the tool (off: not listed)."""

    fn: Callable[..., Answer]
    name: str
    title: str
    description: str
    output: type[BaseModel]
    read_only: bool = False
    destructive: bool = False
    idempotent: bool = False
    coordinator: bool = False
    write_when: str | None = None
    text: Callable[[Answer], str] | None = None
    setting: str | None = None
    takes: type[BaseModel] | None = None
    omit: tuple[str, ...] = ()

    @property
    def counts_a_write(self) -> bool:
        """Whether the frame counts one write of an agent token before the tool runs."""
        return not self.read_only and self.write_when is None

    @property
    def annotations(self) -> ToolAnnotations:
        if self.read_only:
            return ToolAnnotations(
                title=self.title, read_only_hint=True, idempotent_hint=True, open_world_hint=False
            )
        return ToolAnnotations(
            title=self.title,
            read_only_hint=False,
            destructive_hint=self.destructive,
            idempotent_hint=self.idempotent,
            open_world_hint=False,
        )


# Every tool, in the order the server lists them; filled as the modules of `ledger.mcp.tools` load.
REGISTRY: list[ToolSpec] = []


def _one_line(doc: str | None) -> str:
    return " ".join((doc or "").split())


def tool(
    *,
    title: str,
    output: type[BaseModel],
    read_only: bool = False,
    destructive: bool = False,
    idempotent: bool = False,
    coordinator: bool = False,
    write_when: str | None = None,
    text: Callable[[Answer], str] | None = None,
    takes: type[BaseModel] | None = None,
    omit: tuple[str, ...] = (),
) -> Callable[[Callable[..., Answer]], Callable[..., Answer]]:
    """Register the decorated function as a tool under its own name, described by its docstring.

    `takes`: the request shape of its action (`ledger.actions.shapes`), whose fields, less `omit`, are the
    tool's parameters after its own, each with its description and rules: the function receives them
    checked, as `payload`. A parameter of its own named like a field of the shape states that field
    differently for the tool (a bound on an id, a list besides a string) and goes into the payload."""

    def register(fn: Callable[..., Answer]) -> Callable[..., Answer]:
        REGISTRY.append(
            ToolSpec(
                fn=fn,
                name=fn.__name__,
                title=title,
                description=_one_line(fn.__doc__),
                output=output,
                read_only=read_only,
                destructive=destructive,
                idempotent=idempotent,
                coordinator=coordinator,
                write_when=write_when,
                text=text,
                takes=takes,
                omit=omit,
            )
        )
        return fn

    return register


def also_as(fn: Callable[..., Answer], *, name: str, title: str, description: str, setting: str) -> None:
    """Register the tool `fn` once more under another name, listed only while `setting` is true."""
    spec = next(spec for spec in REGISTRY if spec.fn is fn)
    REGISTRY.append(replace(spec, name=name, title=title, description=description, setting=setting))


def acting(caller_of: CallerOf, ctx: Context) -> Caller:
    """Who makes this call, with the writes it makes audited as made through MCP."""
    return replace(caller_of(ctx), via=VIA)


def readable(exc: ValidationError) -> str:
    """A pydantic error as one line a person can act on: `field: message; field: message`."""
    parts = []
    for error in exc.errors():
        field = ".".join(str(part) for part in error.get("loc", ())) or "arguments"
        parts.append(f"{field}: {str(error.get('msg', 'invalid')).removeprefix('Value error, ')}")
    return "; ".join(parts) or "invalid arguments"


def refusals_as(error: Callable[[str], Exception], work: Callable[[], R]) -> R:
    """Run `work` the way Django runs a view (fresh database connections around it), every refusal of the
    frame, of the ledger or of a request shape raised as `error` with its readable text."""
    close_old_connections()
    try:
        return work()
    except ApiRefusal as exc:
        raise error(exc.message) from exc
    except LedgerError as exc:
        raise error(exc.message) from exc
    except ValidationError as exc:
        raise error(readable(exc)) from exc
    finally:
        close_old_connections()


def storable(name: str, value: Any) -> None:
    """Refuse a NUL character or a lone surrogate in any argument, filters included: PostgreSQL
    refuses them even in a lookup (the API refuses them in its path and query the same way)."""
    try:
        check_text(value) if isinstance(value, str) else check_json(value)
    except InvalidValue as exc:
        raise services.invalid(name, str(exc)) from exc


def as_json(answer: Answer) -> str:
    """The answer as the text content beside it: its JSON, as the SDK writes it."""
    return pydantic_core.to_json(answer, indent=2).decode()


def bind(spec: ToolSpec, caller_of: CallerOf) -> Callable[..., CallToolResult]:
    """The function the SDK registers for `spec`: the tool's own parameters after a `Context`, answering
    a `CallToolResult` whose structured content the SDK checks against `spec.output`."""
    signature = inspect.signature(spec.fn, eval_str=True)
    _caller, *parameters = (p for p in signature.parameters.values() if p.name != "payload")
    if spec.takes is not None:
        # The tool's own required parameters (an id), the shape's fields, then its own optional ones.
        own = {p.name for p in parameters}
        derived = [p for p in shape_parameters(spec.takes, spec.omit) if p.name not in own]
        required = [p for p in parameters if p.default is inspect.Parameter.empty]
        optional = [
            p.replace(kind=inspect.Parameter.KEYWORD_ONLY)
            for p in parameters
            if p.default is not inspect.Parameter.empty
        ]
        parameters = [*required, *derived, *optional]
    context = inspect.Parameter("ctx", inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=Context)
    returns = Annotated[CallToolResult, spec.output]

    def answer(ctx: Context, arguments: dict[str, Any]) -> CallToolResult:
        for name, value in arguments.items():
            storable(name, value)
        caller = acting(caller_of, ctx)
        if spec.coordinator:
            # Before the write is counted: a refused call costs the agent nothing.
            caller.require_coordinator()
        if spec.counts_a_write:
            caller.count_write()
        found = spec.fn(caller, **_with_payload(spec, arguments))
        text = spec.text(found) if spec.text is not None else as_json(found)
        return CallToolResult(content=[TextContent(type="text", text=text)], structured_content=found)

    def run(ctx: Context, **arguments: Any) -> CallToolResult:
        return refusals_as(ToolError, lambda: answer(ctx, arguments))

    run.__name__ = run.__qualname__ = spec.name
    run.__doc__ = spec.description
    run.__annotations__ = {"ctx": Context, **{p.name: p.annotation for p in parameters}, "return": returns}
    run.__signature__ = signature.replace(  # type: ignore[attr-defined]
        parameters=[context, *parameters], return_annotation=returns
    )
    return run


def shape_parameters(shape: type[BaseModel], omit: tuple[str, ...] = ()) -> list[inspect.Parameter]:
    """The fields of a request shape as keyword parameters of a tool: the same types, descriptions and
    stated rules, required where the shape requires them."""
    found = []
    for name, field in shape.model_fields.items():
        if name in omit:
            continue
        stated = Field(description=field.description, json_schema_extra=field.json_schema_extra)
        default = (
            inspect.Parameter.empty if field.is_required() else field.get_default(call_default_factory=True)
        )
        found.append(
            inspect.Parameter(
                name,
                inspect.Parameter.KEYWORD_ONLY,
                default=default,
                annotation=Annotated[field.annotation, *field.metadata, stated],
            )
        )
    return found


def _with_payload(spec: ToolSpec, arguments: dict[str, Any]) -> dict[str, Any]:
    """The tool's arguments with the shape's fields read by the shape, as `payload`. A field left at its
    default is left out of it, so that the action sees only what the caller gave (a state not sent is
    kept, not cleared)."""
    if spec.takes is None:
        return arguments
    fields = spec.takes.model_fields
    given = {
        name: value
        for name, value in arguments.items()
        if name in fields
        and name not in spec.omit
        and value != fields[name].get_default(call_default_factory=True)
    }
    rest = {name: value for name, value in arguments.items() if name not in fields or name in spec.omit}
    return {**rest, "payload": spec.takes.model_validate(given)}
