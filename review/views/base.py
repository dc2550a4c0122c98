"""What every dashboard screen shares: the typed htmx request, the page-or-fragment answer of a list,
pagination, the project's header context, the redirect back with a message, and the step that hands
a valid form to a service.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from django import forms
from django.contrib import messages
from django.core.paginator import Page, Paginator
from django.db.models import Count, Q, QuerySet
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.middleware.csrf import get_token
from django.shortcuts import render
from django.urls import reverse
from django.utils.html import format_html, format_html_join
from django.utils.http import url_has_allowed_host_and_scheme
from django.utils.safestring import SafeString
from django_htmx.middleware import HtmxDetails

from ledger import services
from ledger.models import EntryStatus, InboxEntry, Project
from review.access import ProjectAccess
from review.forms import problems
from review.neighbours import Neighbours

PAGE_SIZE = 50
T = TypeVar("T")


class HtmxHttpRequest(HttpRequest):
    """A request as django-htmx's middleware leaves it: `htmx` says whether htmx sent it, and how."""

    htmx: HtmxDetails


def render_list(
    request: HtmxHttpRequest, template: str, partial: str, context: dict[str, Any], *, status: int = 200
) -> HttpResponse:
    """The whole page, or for an htmx request only the list's region: the inline partial `partial` of
    `template`, which is what the request swaps."""
    name = f"{template}#{partial}" if request.htmx else template
    return render(request, name, context, status=status)


def urls_by_id(name: str, *args: object) -> Callable[[int], str]:
    """`reverse(name, args=[*args, pk])` for many `pk`s at the cost of one reverse: a list builds the
    links of every row from it (fifty rows with three links each spent more time reversing than
    reading the rows). The id must be the URL's last argument."""
    marker = 2**62  # no project slug holds these nineteen digits
    head, tail = reverse(name, args=[*args, marker]).rsplit(str(marker), 1)
    return lambda pk: f"{head}{pk}{tail}"


def hidden_fields(request: HttpRequest, **fields: str) -> SafeString:
    """The CSRF token and `fields` as hidden inputs, rendered once for the forms of every row of a list
    (fifty rows' `{% csrf_token %}` tags took longer to render than their text)."""
    return format_html(
        '<input type="hidden" name="csrfmiddlewaretoken" value="{}">{}',
        get_token(request),
        format_html_join("", '<input type="hidden" name="{}" value="{}">', fields.items()),
    )


def paginate(rows: QuerySet[Any] | Sequence[Any], number: str | None) -> Page[Any]:
    """Page `number` of `rows` (the first for a missing or bad number, the last past the end)."""
    return Paginator(rows, PAGE_SIZE).get_page(number)


def _counts(project: Project) -> dict[str, int]:
    """Entries by status, in one query (navigation and inbox header).

    Counting `status` rather than `id` lets PostgreSQL answer from the index alone (index-only scan).
    """
    totals = InboxEntry.objects.filter(project=project).aggregate(
        pending=Count("status", filter=Q(status=EntryStatus.PENDING)),
        merged=Count("status", filter=Q(status=EntryStatus.MERGED)),
        rejected=Count("status", filter=Q(status=EntryStatus.REJECTED)),
    )
    return {key: value or 0 for key, value in totals.items()}


def project_context(access: ProjectAccess, **extra: Any) -> dict[str, Any]:
    """What every project page shows around its content: the project, the reviewer's role, the counts."""
    return {"project": access.project, "access": access, "counts": _counts(access.project), **extra}


def redirect_back(
    request: HttpRequest, fallback: str, *, error: str = "", success: str = ""
) -> HttpResponseRedirect:
    """Say `error` or `success`, then go to `next` when it is a local URL (the filtered list the action
    came from), else to `fallback`: post/redirect/get for plain form posts."""
    if error:
        messages.error(request, error)
    elif success:
        messages.success(request, success)
    target = request.POST.get("next") or request.GET.get("next") or ""
    if not url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}
    ) or not target.startswith("/"):
        target = fallback
    return HttpResponseRedirect(target)


def with_query(url: str, query: str) -> str:
    """`url` carrying a list's query string (its filters), when there is one."""
    return f"{url}?{query}" if query else url


def place_links(
    place: Neighbours, project: Project, row_view: str, list_view: str, query: str
) -> dict[str, str]:
    """The URLs of a list and of the rows around one of its rows (previous, next, and the list's first
    for a row the list no longer holds), each with the list's query string; "" where there is none."""

    def row(pk: int | None) -> str:
        return with_query(reverse(row_view, args=[project.slug, pk]), query) if pk else ""

    return {
        "list": with_query(reverse(list_view, args=[project.slug]), query),
        "previous": row(place.previous),
        "next": row(place.next),
        "first": row(place.first),
    }


def refused(request: HttpRequest, form: forms.Form) -> None:
    """Tell the reviewer every reason `form` was refused, each as a message of its own."""
    for problem in problems(form):
        messages.error(request, problem)


def attempt(write: Callable[[], T]) -> tuple[T | None, str]:
    """`(write(), "")`, or `(None, message)` when the service refused (`LedgerError`).

    A row the URL names that the service cannot find is a 404, as for any row outside the reviewer's
    project: the refusal is for what the reviewer asked, not for a page that does not exist.
    """
    try:
        return write(), ""
    except services.NotFound as exc:
        raise Http404(exc.message) from exc
    except services.LedgerError as exc:
        return None, exc.message


def submit(form: forms.Form, write: Callable[[dict[str, Any]], T]) -> T | None:
    """`write(form.cleaned_data)` when the form is valid; None when it is not or the service refused,
    whose message then becomes a non-field error of the form (shown like the form's own errors)."""
    if not form.is_valid():
        return None
    result, error = attempt(lambda: write(form.cleaned_data))
    if error:
        form.add_error(None, error)
    return result
