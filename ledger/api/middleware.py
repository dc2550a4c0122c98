"""Keep every answer under /api/ in the API's error shape (docs/api.md)."""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, JsonResponse


class ApiJsonErrorMiddleware:
    """Every error under /api/ is JSON with `error`, whoever produced it.

    django-ninja answers a method a route does not take itself (plain text 405), before any of the
    API's exception handlers run; Django answers a path no URL pattern matches with its HTML 404 (the
    catch-all route cannot match a path holding a newline, since `.` stops at one); and an unhandled
    exception becomes Django's HTML 500. Each gets the JSON shape here.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if (
            response.status_code < 400
            or not request.path.startswith("/api/")
            or response.get("Content-Type", "").startswith("application/json")
        ):
            return response
        if response.status_code == 405:
            allowed = response.get("Allow", "")
            answer = JsonResponse(
                {"error": f"{request.method} is not allowed here; use one of: {allowed or 'none'}"},
                status=405,
            )
            if allowed:
                answer["Allow"] = allowed
            return answer
        if response.status_code == 404:
            message = f"no such API route: {request.method} {request.path!r}"
        else:
            message = response.reason_phrase or "error"
        return JsonResponse({"error": message}, status=response.status_code)
