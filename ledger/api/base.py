"""The agent API's frame (docs/api.md): the NinjaAPI instance, bearer tokens, who is asking, and errors.

Route modules (`ledger/api/routes_inbox.py`, …) register on `api` and start each handler with
`caller = project_caller(request, project)` (`coordinator=True` for a coordinators' route: the role is
checked before a write is counted), then `caller.require_agent(name)` where the route acts for an agent.
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import RequestDataTooBig
from django.db.models import QuerySet
from django.http import HttpRequest, HttpResponse
from django_filters import FilterSet
from ninja import NinjaAPI, Schema
from ninja.errors import AuthenticationError, HttpError, ValidationError
from ninja.security import HttpBearer

from ledger import selectors
from ledger.actions import frame
from ledger.actions.frame import ApiRefusal, Caller, RateLimited, caller_for, token_used
from ledger.actions.shapes import Paging
from ledger.models import ApiToken
from ledger.services import Conflict, Invalid, LedgerError, NotFound, invalid


class BearerToken(HttpBearer):
    def authenticate(self, request: HttpRequest, token: str) -> ApiToken | None:
        if not token or len(token) > 200:
            return None
        found = selectors.token_for_secret(token)
        if found is not None:
            token_used(found)
        return found


api = NinjaAPI(
    title="Canon agent API",
    version="1",
    description=(
        "Agents propose decisions and memories; coordinators review them. "
        "Routes, errors and limits in full: docs/api.md in Canon's repository."
    ),
    auth=BearerToken(),
    urls_namespace="api",
)


def project_caller(request: HttpRequest, project_slug: str, *, coordinator: bool = False) -> Caller:
    """The authenticated caller, refused with 404 when the token belongs to another project.

    Also refuses a NUL character anywhere in the path or the query string (400): no stored value can
    contain one, and PostgreSQL rejects it even in a lookup, so no route has to think about it.
    """
    token = request.auth  # type: ignore[attr-defined]
    if not isinstance(token, ApiToken):
        raise ApiRefusal(401, "missing or invalid bearer token")
    if token.project.slug != project_slug:
        raise ApiRefusal(404, f"no project {project_slug!r} for this token")
    if "\x00" in request.path:
        raise invalid("path", "must not contain the NUL character (%00)")
    for key, values in request.GET.lists():
        if "\x00" in key or any("\x00" in value for value in values):
            raise invalid(key.replace("\x00", "") or "query", "must not contain the NUL character (%00)")
    caller = caller_for(token)
    if coordinator:
        # A route for coordinators refuses an agent before its write is counted: the refusal costs
        # the agent nothing.
        caller.require_coordinator()
    if request.method not in ("GET", "HEAD", "OPTIONS"):
        caller.count_write()
    return caller


def _error(request: HttpRequest, status: int, message: str, **extra: Any) -> HttpResponse:
    if status == 400 and not extra.get("details"):
        # Every 400 carries `details`, the per-field list a client can act on (docs/api.md).
        extra["details"] = [{"field": "body", "message": message}]
    return api.create_response(request, {"error": message, **extra}, status=status)


@api.exception_handler(ApiRefusal)
def _refusal(request: HttpRequest, exc: ApiRefusal) -> HttpResponse:
    response = _error(request, exc.status, exc.message)
    if isinstance(exc, RateLimited):
        response["Retry-After"] = str(exc.retry_after)
    return response


# What each refusal of the ledger means over HTTP; any other `LedgerError` is a 400.
STATUS_OF: dict[type[LedgerError], int] = {Invalid: 400, NotFound: 404, Conflict: 409}


@api.exception_handler(LedgerError)
def _ledger_error(request: HttpRequest, exc: LedgerError) -> HttpResponse:
    status = next((code for cls, code in STATUS_OF.items() if isinstance(exc, cls)), 400)
    extra: dict[str, Any] = {}
    if exc.details:
        extra["details"] = exc.details
    if isinstance(exc, Conflict) and exc.retryable:
        extra["retryable"] = True
    return _error(request, status, exc.message, **extra)


@api.exception_handler(AuthenticationError)
def _unauthenticated(request: HttpRequest, exc: AuthenticationError) -> HttpResponse:
    return _error(request, 401, "missing or invalid bearer token: send 'Authorization: Bearer <token>'")


@api.exception_handler(ValidationError)
def _invalid(request: HttpRequest, exc: ValidationError) -> HttpResponse:
    details = []
    for error in exc.errors:
        location = [
            str(part) for part in error.get("loc", ()) if part not in ("body", "payload", "query", "path")
        ]
        message = str(error.get("msg", "invalid")).removeprefix("Value error, ")
        details.append({"field": ".".join(location) or "body", "message": message})
    summary = "; ".join(f"{d['field']}: {d['message']}" for d in details[:5]) or "invalid request"
    return _error(request, 400, summary, details=details)


@api.exception_handler(HttpError)
def _http_error(request: HttpRequest, exc: HttpError) -> HttpResponse:
    message = str(exc)
    if exc.status_code == 400 and message.startswith("Cannot parse request body"):
        if isinstance(exc.__cause__, RecursionError):
            message = "request body is nested too deeply to parse"
        else:
            message = "request body is not valid JSON"
    return _error(request, exc.status_code, message)


@api.exception_handler(RequestDataTooBig)
def _too_big(request: HttpRequest, exc: RequestDataTooBig) -> HttpResponse:
    return _error(request, 413, "request body is larger than 1 MiB")


def route_unknown_paths() -> None:
    """Answer every path under /api/ that no route matches with a JSON 404, not Django's HTML page.

    Called once, after every route module has registered: URL patterns are tried in order.
    """

    @api.api_operation(
        ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "HEAD"],
        "/{path:unknown}",
        auth=None,
        include_in_schema=False,
    )
    def unknown_path(request: HttpRequest, unknown: str) -> HttpResponse:
        return _error(request, 404, f"no such API route: {request.method} {request.path}")


# ---------------------------------------------------------------------------------------------
# Helpers shared by the route modules


def listed(
    filterset: type[FilterSet],
    rows: QuerySet[Any],
    filters: Schema,
    paging: Paging,
    response: HttpResponse,
    **fixed: str,
) -> list[Any]:
    """One page of a list (`ledger.actions.frame.listed`); the total goes in X-Total-Count."""
    found = frame.listed(filterset, rows, filters, paging, **fixed)
    response["X-Total-Count"] = str(found.total)
    return found.items


def page(qs: QuerySet[Any], response: HttpResponse, paging: Paging) -> list[Any]:
    """One page of `qs` (`ledger.actions.frame.page`); the total goes in X-Total-Count."""
    found = frame.page(qs, paging)
    response["X-Total-Count"] = str(found.total)
    return found.items
