"""Keep every answer under /api/ in the API's error shape (SPEC §3)."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse


class ApiMethodNotAllowedMiddleware:
    """A method a route does not take gets a JSON 405 with `error`, not the framework's plain text.

    django-ninja answers such requests itself, before any of the API's exception handlers run.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if (
            response.status_code == 405
            and request.path.startswith("/api/")
            and not response.get("Content-Type", "").startswith("application/json")
        ):
            allowed = response.get("Allow", "")
            answer = JsonResponse(
                {"error": f"{request.method} is not allowed here; use one of: {allowed or 'none'}"},
                status=405,
            )
            if allowed:
                answer["Allow"] = allowed
            return answer
        return response
