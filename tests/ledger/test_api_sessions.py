"""Session routes (docs/ledger.md, docs/api.md)."""

from __future__ import annotations


def test_session_create_and_current(project, alice):
    response = alice.post("/sessions", {"session_id": "s1", "focus_area": "auth", "active_issues": ["#1"]})
    assert response.status_code == 201
    current = alice.get("/sessions/current")
    assert current.status_code == 200
    assert (current.json()["session_id"], current.json()["focus_area"], current.json()["ended_at"]) == (
        "s1",
        "auth",
        None,
    )


def test_session_id_is_generated(project, alice):
    assert alice.post("/sessions", {}).json()["session_id"]


def test_duplicate_session_id_is_409(project, alice):
    alice.post("/sessions", {"session_id": "s1"})
    response = alice.post("/sessions", {"session_id": "s1"})
    assert response.status_code == 409


def test_starting_a_session_ends_the_previous_one(project, alice):
    alice.post("/sessions", {"session_id": "s1"})
    alice.post("/sessions", {"session_id": "s2"})
    assert alice.get("/sessions/s1").json()["ended_at"] is not None
    assert alice.get("/sessions/current").json()["session_id"] == "s2"
    assert [s["session_id"] for s in alice.get("/sessions").json()] == ["s2", "s1"]


def test_update_current_session(project, alice):
    alice.post("/sessions", {"session_id": "s1", "summary": "first"})
    response = alice.patch(
        "/sessions/current",
        {
            "focus_area": "api",
            "summary_append": "second",
            "serialized_state": {"k": [1]},
            "active_issues": ["#9"],
        },
    )
    body = response.json()
    assert (body["focus_area"], body["summary"], body["serialized_state"], body["active_issues"]) == (
        "api",
        "first\nsecond",
        {"k": [1]},
        ["#9"],
    )
    assert alice.patch("/sessions/current", {"summary": "replaced"}).json()["summary"] == "replaced"
    assert alice.get("/sessions/current").json()["serialized_state"] == {"k": [1]}


def test_end_session(project, alice):
    alice.post("/sessions", {"session_id": "s1"})
    assert alice.patch("/sessions/current", {"end": True}).json()["ended_at"] is not None
    assert alice.get("/sessions/current").status_code == 404


def test_no_session(project, alice):
    response = alice.get("/sessions/current")
    assert response.status_code == 404
    assert "no open session" in response.json()["error"]
    assert alice.patch("/sessions/current", {"focus_area": "x"}).status_code == 404
    assert alice.get("/sessions/nope").status_code == 404


def test_session_of_another_project_is_404(project, other_project, alice):
    from ledger import services

    services.session_start(project=other_project, session_id="theirs")
    assert alice.get("/sessions/theirs").status_code == 404
    assert alice.get("/sessions/current").status_code == 404
