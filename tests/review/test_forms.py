"""Posts whose input is refused: by the form (its shape) or by the service (the ledger's rules), the
reviewer is told why, what was typed is kept where it was typed, and nothing is written."""

from __future__ import annotations

import pytest
from django.urls import reverse

from ledger import services
from ledger.models import AgentMemory, AuditEvent, Decision, DecisionRevision, InboxEntry
from review.forms import BULK_LIMIT, REASON_MAX_LENGTH, MemoryMergeForm, SupersedeForm
from review.views.undo import ResolveForm


def decision_url(name, decision):
    return reverse(f"review:{name}", args=["alpha", decision.pk])


def untouched(decision, title="Use PostgreSQL for state"):
    """Nothing was written about `decision` since the fixture created it."""
    decision.refresh_from_db()
    assert (decision.status, decision.title, decision.superseded_by_id) == ("active", title, None)
    assert not DecisionRevision.objects.exists()
    events = AuditEvent.objects.filter(object_type="decision", object_id=decision.pk)
    assert list(events.values_list("action", flat=True)) == ["create"]


def test_edit_with_an_empty_title_is_refused_in_the_form_and_keeps_what_was_typed(lead, project, decision):
    response = lead.post(
        decision_url("decision_edit", decision),
        {"title": "   ", "content": "Typed <i>content</i>.", "rationale": "Kept."},
    )
    html = response.content.decode()
    assert response.status_code == 400
    # The error is beside the field it is about, which says so and takes the focus; no banner repeats it.
    assert (
        'value="   " aria-invalid="true" aria-describedby="edit-title-error" autofocus></label>'
        '<span class="field-error" id="edit-title-error">title: must not be empty</span>'
    ) in html
    assert '<p class="message error">' not in html
    assert '<details class="panel" id="edit" open>' in html
    assert "Typed &lt;i&gt;content&lt;/i&gt;.</textarea>" in html and ">Kept.</textarea>" in html
    untouched(decision)


def test_edit_with_a_title_too_long_says_how_long_it_may_be(lead, project, decision):
    response = lead.post(
        decision_url("decision_edit", decision), {"title": "x" * 301, "content": "PG.", "rationale": ""}
    )
    assert response.status_code == 400
    assert "title: must be at most 300 characters, got 301" in response.content.decode()
    untouched(decision)


def test_edit_with_a_nul_character_is_refused_in_the_service_words(lead, project, decision):
    response = lead.post(
        decision_url("decision_edit", decision), {"title": "PG", "content": "a\x00b", "rationale": ""}
    )
    assert response.status_code == 400
    assert "content: must not contain the NUL character" in response.content.decode()
    untouched(decision)


def test_supersede_by_an_unknown_decision_is_refused_beside_the_choice(lead, project, decision):
    response = lead.post(
        decision_url("decision_supersede", decision), {"mode": "existing", "superseded_by": "999999"}
    )
    html = response.content.decode()
    assert response.status_code == 400
    assert '<details class="panel" id="supersede" open>' in html
    assert (
        '<p class="message error form-error" id="supersede-errors" role="alert">'
        "superseded_by_id: no decision 999999 in project alpha</p>"
    ) in html
    assert '<select name="superseded_by" required aria-describedby="supersede-errors" autofocus>' in html
    untouched(decision)


@pytest.mark.parametrize("value", ["abc", "0", "-3", "9" * 40, "1.5"])
def test_supersede_by_something_that_is_no_id_is_refused_beside_the_choice(lead, project, decision, value):
    response = lead.post(decision_url("decision_supersede", decision), {"superseded_by": value})
    html = response.content.decode()
    assert response.status_code == 400
    assert 'aria-invalid="true" aria-describedby="supersede-superseded_by-error" autofocus>' in html
    assert '<span class="field-error" id="supersede-superseded_by-error">' in html
    untouched(decision)


def test_supersede_by_a_decision_of_another_project_is_refused(lead, project, other_project, decision):
    theirs = services.decision_create(
        project=other_project, agent_name="x", type="scope", title="Theirs", content="c", by="l"
    )
    response = lead.post(
        decision_url("decision_supersede", decision), {"superseded_by": theirs.pk}, follow=True
    )
    assert f"no decision {theirs.pk} in project alpha".encode() in response.content
    untouched(decision)


def test_a_replacement_the_service_refuses_is_shown_again_with_its_reason(lead, project, decision):
    """The form is valid; the ledger refuses (the decision was archived meanwhile)."""
    services.decision_archive(project=project, decision_id=decision.pk, by="someone")
    response = lead.post(
        decision_url("decision_supersede", decision),
        {"mode": "new", "type": "scope", "title": "Replacement", "content": "Typed here."},
    )
    html = response.content.decode()
    assert response.status_code == 400
    assert (
        '<p class="message error form-error" id="replacement-errors" role="alert">'
        f"cannot supersede decision {decision.pk}: it is archived, not active</p>"
    ) in html
    # The replacement as typed is still there, its first field focused and described by the reason.
    assert ">Typed here.</textarea>" in html
    assert '<select name="type" aria-describedby="replacement-errors" autofocus>' in html
    assert "Archive this decision" not in html
    assert not Decision.objects.filter(title="Replacement").exists()


def test_record_a_decision_refused_keeps_what_was_typed_on_the_list(lead, project):
    response = lead.post(
        reverse("review:decision_new", args=["alpha"]),
        {"type": "scope", "title": "", "content": "Written <b>carefully</b>.", "agent_name": "Bob"},
    )
    html = response.content.decode()
    assert response.status_code == 400
    assert '<details class="panel" id="record" open>' in html
    assert '<span class="field-error" id="record-title-error">title: must not be empty</span>' in html
    assert 'aria-describedby="record-title-error" autofocus' in html
    assert "Written &lt;b&gt;carefully&lt;/b&gt;.</textarea>" in html and 'value="Bob"' in html
    assert not Decision.objects.exists()


def test_a_reason_longer_than_its_field_allows_is_refused_and_the_entry_stays_pending(lead, project, entry):
    response = lead.post(
        reverse("review:entry_reject", args=["alpha", entry.pk]),
        {"reason": "x" * (REASON_MAX_LENGTH + 1)},
        HTTP_HX_REQUEST="true",
    )
    assert response.status_code == 200
    assert f"reason: must be at most {REASON_MAX_LENGTH} characters" in response.content.decode()
    entry.refresh_from_db()
    assert entry.status == "pending"


def test_a_row_reason_wins_over_the_bar_reason(lead, project, entry):
    lead.post(
        reverse("review:entry_reject", args=["alpha", entry.pk]),
        {"reason": "from the bar", f"reason_{entry.pk}": "from the row"},
    )
    entry.refresh_from_db()
    assert (entry.status, entry.reason) == ("rejected", "from the row")


def test_bulk_with_more_ids_than_allowed_does_nothing_and_says_so(lead, project, entry):
    ids = [entry.pk, *range(10**6, 10**6 + BULK_LIMIT)]
    response = lead.post(
        reverse("review:inbox_bulk", args=["alpha"]), {"action": "reject", "ids": ids}, follow=True
    )
    assert f"Select at most {BULK_LIMIT} entries at a time.".encode() in response.content
    assert InboxEntry.objects.get(pk=entry.pk).status == "pending"


def test_memory_edit_of_importance_alone_leaves_the_tags_as_they_are(lead, project):
    memory = services.memory_record(
        project=project, agent_name="Alice", type="learning", content="a", tags="ops"
    )
    lead.post(reverse("review:memory_edit", args=["alpha", memory.pk]), {"importance": "high"})
    memory.refresh_from_db()
    assert (memory.importance, memory.tags) == ("high", ["ops"])


def test_memory_edit_with_an_empty_tags_field_clears_them(lead, project):
    memory = services.memory_record(
        project=project, agent_name="Alice", type="learning", content="a", tags="ops"
    )
    response = lead.post(
        reverse("review:memory_edit", args=["alpha", memory.pk]),
        {"importance": "medium", "tags": ""},
        follow=True,
    )
    assert f"Memory {memory.pk} saved.".encode() in response.content
    assert AgentMemory.objects.get(pk=memory.pk).tags == []


@pytest.mark.parametrize(
    ("form", "data", "message"),
    [
        (SupersedeForm, {}, "Choose the decision that replaces this one."),
        (SupersedeForm, {"superseded_by": "seven"}, "Choose the decision that replaces this one."),
        (SupersedeForm, {"superseded_by": "0"}, "superseded_by: no such decision"),
        (SupersedeForm, {"superseded_by": "9" * 19}, "superseded_by: no such decision"),
        (MemoryMergeForm, {}, "Choose the memory to keep."),
        (MemoryMergeForm, {"keep": "-3"}, "keep: no such memory"),
        (ResolveForm, {"supersede": "x"}, "supersede: no such decision"),
        (ResolveForm, {"supersede": "9" * 19}, "supersede: no such decision"),
    ],
)
def test_an_id_no_row_can_have_is_refused_with_what_it_names(form, data, message):
    bound = form(data)

    assert not bound.is_valid()
    assert message in [error for errors in bound.errors.values() for error in errors]


def test_an_optional_id_may_be_left_out():
    bound = ResolveForm({})

    assert bound.is_valid(), bound.errors
    assert bound.cleaned_data["supersede"] is None
