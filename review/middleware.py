"""Request handling shared by every dashboard view."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import urlsplit

from django.conf import settings
from django.contrib.auth.views import redirect_to_login
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import resolve_url
from django_htmx.http import HttpResponseClientRedirect
from django_htmx.middleware import HtmxDetails


class HtmxLoginRedirectMiddleware:
    """Send an htmx request whose login has expired to the login page as a whole page.

    `login_required` answers with a redirect to the login page. The browser follows it inside the htmx
    request, and htmx would then swap the whole login page into the table row it was updating. An
    `HX-Redirect` makes htmx load the login page instead, with `next` pointing at the page the reviewer
    was on (the action itself only accepts POST). Must come after django-htmx's middleware.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        htmx: HtmxDetails | None = getattr(request, "htmx", None)
        if (
            htmx
            and isinstance(response, HttpResponseRedirect)
            and urlsplit(response.url).path == resolve_url(settings.LOGIN_URL)
        ):
            back = htmx.current_url_abs_path or resolve_url(settings.LOGIN_REDIRECT_URL)
            return HttpResponseClientRedirect(redirect_to_login(back).url)
        return response
