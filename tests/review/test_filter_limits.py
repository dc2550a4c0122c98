"""The memory list's tag filter: more tags than a row can hold is a form error, never a 500."""

from __future__ import annotations

from django.urls import reverse

from ledger import services
from ledger.values import MAX_TAGS


def tags(n: int) -> str:
    return ",".join(f"t{i}" for i in range(n))


def test_a_thousand_tags_in_the_memory_filter_is_a_form_error(lead, project):
    services.memory_record(project=project, agent_name="Alice", type="learning", content="a", tags="t1")
    response = lead.get("/p/alpha/memory/", {"tag": tags(1000)})
    assert response.status_code == 200
    assert f"at most {MAX_TAGS} tags" in response.content.decode()
    assert list(response.context["page"].object_list) == []


def test_one_tag_past_the_maximum_is_a_form_error(lead, project):
    response = lead.get("/p/alpha/memory/", {"tag": tags(MAX_TAGS + 1)})
    assert response.status_code == 200
    assert response.context["filter"].errors["tag"]


def test_the_maximum_of_tags_filters(lead, project):
    services.memory_record(project=project, agent_name="Alice", type="learning", content="a", tags="t31")
    services.memory_record(project=project, agent_name="Alice", type="learning", content="b", tags="x")
    response = lead.get("/p/alpha/memory/", {"tag": tags(MAX_TAGS)})
    assert [m.content for m in response.context["page"].object_list] == ["a"]


def test_a_tag_no_row_can_carry_matches_nothing(lead, project):
    services.memory_record(project=project, agent_name="Alice", type="learning", content="a", tags="t1")
    response = lead.get("/p/alpha/memory/", {"tag": "x" * 65})
    assert response.status_code == 200
    assert list(response.context["page"].object_list) == []


def test_editing_a_memory_to_too_many_tags_is_refused_in_the_row(lead, project):
    memory = services.memory_record(project=project, agent_name="Alice", type="learning", content="a")
    response = lead.post(
        reverse("review:memory_edit", args=["alpha", memory.pk]),
        {"importance": "high", "tags": tags(MAX_TAGS + 1)},
        HTTP_HX_REQUEST="true",
    )
    assert f"at most {MAX_TAGS} tags" in response.content.decode()
    memory.refresh_from_db()
    assert memory.tags == []
