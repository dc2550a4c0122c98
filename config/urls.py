from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.templatetags.static import static
from django.urls import include, path
from django.utils.functional import lazy
from django.views import defaults
from django.views.generic import RedirectView

from ledger.api import api

urlpatterns = [
    path("admin/", admin.site.urls),
    # Browsers ask for /favicon.ico when a page names no icon (a PDF, a JSON answer): the SVG one.
    path("favicon.ico", RedirectView.as_view(url=lazy(static, str)("favicon.svg"))),
    path("api/", api.urls),
    path("login/", auth_views.LoginView.as_view(), name="login"),
    path("logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("", include("review.urls")),
]


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """A request Django refuses before any view runs (a Host header it cannot read, say): the API's
    callers get JSON as on every other 4xx of the API, everyone else Django's own page."""
    if request.path.startswith("/api/"):
        message = "the request cannot be read: its Host header or another part of it is not valid"
        return JsonResponse(
            {"error": message, "details": [{"field": "headers", "message": message}]}, status=400
        )
    return defaults.bad_request(request, exception)


handler400 = bad_request
