from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.templatetags.static import static
from django.urls import include, path
from django.utils.functional import lazy
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
