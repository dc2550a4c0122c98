"""The admin is reachable after `make run`: `manage.py demo` makes a superuser and prints its login; and
the site has an icon, at the address browsers ask for too."""

from __future__ import annotations

from io import StringIO

from django.contrib.auth import SESSION_KEY, get_user_model
from django.core.management import call_command
from django.test import Client

from ledger.management.commands.demo import ADMIN_USER, DEMO_PASSWORD, DEMO_USER


def demo(tmp_path) -> str:
    out = StringIO()
    call_command("demo", "--workspace", str(tmp_path), "--url", "http://127.0.0.1:8011", stdout=out)
    return out.getvalue()


def admin_sign_in(username: str, password: str) -> tuple[Client, object]:
    client = Client(REMOTE_ADDR="203.0.113.20")
    response = client.post("/admin/login/?next=/admin/", {"username": username, "password": password})
    return client, response


def test_demo_makes_one_superuser_and_prints_its_login(db, tmp_path):
    first = demo(tmp_path)
    second = demo(tmp_path)

    admins = get_user_model().objects.filter(username=ADMIN_USER)
    assert admins.count() == 1
    admin = admins.get()
    assert admin.is_superuser and admin.is_staff and admin.is_active
    assert admin.check_password(DEMO_PASSWORD)
    for output in (first, second):
        assert (
            f"Admin:     http://127.0.0.1:8011/admin/   {ADMIN_USER} / {DEMO_PASSWORD}   (superuser)"
            in output
        )


def test_demo_resets_the_superusers_password_and_rights(db, tmp_path):
    demo(tmp_path)
    admin = get_user_model().objects.get(username=ADMIN_USER)
    admin.set_password("forgotten")
    admin.is_staff = admin.is_superuser = False
    admin.save()

    demo(tmp_path)

    admin.refresh_from_db()
    assert admin.is_superuser and admin.is_staff and admin.check_password(DEMO_PASSWORD)


def test_the_admin_login_form_accepts_the_demo_superuser(db, tmp_path):
    demo(tmp_path)

    client, response = admin_sign_in(ADMIN_USER, DEMO_PASSWORD)

    assert response.status_code == 302 and response["Location"] == "/admin/"
    assert SESSION_KEY in client.session
    index = client.get("/admin/")
    assert index.status_code == 200
    assert "Site administration" in index.content.decode()
    assert client.get("/admin/auth/user/").status_code == 200


def test_the_admin_refuses_the_demo_coordinator_who_is_not_staff(db, tmp_path):
    demo(tmp_path)
    client, response = admin_sign_in(DEMO_USER, DEMO_PASSWORD)
    assert response.status_code == 200  # the form again, with its error
    assert "staff account" in response.content.decode()
    assert client.get("/admin/").status_code == 302


def test_pages_link_an_svg_icon_that_is_served(db):
    client = Client()
    page = client.get("/login/").content.decode()
    assert '<link rel="icon" href="/static/favicon.svg" type="image/svg+xml">' in page
    icon = client.get("/static/favicon.svg")
    assert icon.status_code == 200
    assert b"<svg" in b"".join(icon.streaming_content if icon.streaming else [icon.content])


def test_favicon_ico_sends_browsers_to_the_svg_icon(db):
    response = Client().get("/favicon.ico")
    assert response.status_code == 302
    assert response["Location"] == "/static/favicon.svg"
