"""The stdio transport's one difference from the SDK's: a line its JSON parser refuses for an unpaired
surrogate (`"\\ud800"`, valid JSON) is read again, so that the tool refuses it naming the argument
instead of the call going unanswered."""

from __future__ import annotations

import json
from typing import Any

from mcp.shared.message import SessionMessage
from mcp_types import jsonrpc_message_adapter
from pydantic import ValidationError

from ledger.values import InvalidValue, check_json


class SurrogatesReadAgain:
    """The messages of a stdio stream, where a line the SDK's parser refused (it takes no unpaired
    surrogate) is parsed again by Python's, which takes them as JSON does. Only its arguments may hold
    one: the id, the method and the tool's name are written back in the answer, which must be UTF-8."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream

    @property
    def last_context(self) -> Any:
        return getattr(self.stream, "last_context", None)

    async def receive(self) -> SessionMessage | Exception:
        return _read_again(await self.stream.receive())

    async def aclose(self) -> None:
        await self.stream.aclose()

    def __aiter__(self) -> SurrogatesReadAgain:
        return self

    async def __anext__(self) -> SessionMessage | Exception:
        return _read_again(await self.stream.__anext__())

    async def __aenter__(self) -> SurrogatesReadAgain:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def _refuse_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _read_again(item: SessionMessage | Exception) -> SessionMessage | Exception:
    if not isinstance(item, ValidationError):
        return item
    line = next((e.get("input") for e in item.errors() if e["type"] == "json_invalid"), None)
    if not isinstance(line, str):
        return item
    try:
        message = json.loads(line, parse_constant=_refuse_constant)
        if not isinstance(message, dict):
            return item
        params = message.get("params")
        check_json(
            {**message, "params": {**params, "arguments": None}} if isinstance(params, dict) else message
        )
        return SessionMessage(jsonrpc_message_adapter.validate_python(message, by_name=False))
    except (ValueError, InvalidValue, TypeError):
        return item
