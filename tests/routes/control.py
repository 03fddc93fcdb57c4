"""A session driven over the live server, for branches, queued messages and approvals."""

from __future__ import annotations

from typing import Any

from tests.live import LiveServer, decode


class Chat:
    """One session driven over HTTP, with the model's requests recorded."""

    def __init__(self, live: LiveServer) -> None:
        self.live = live
        self.sid = live.post("/api/sessions").json()["id"]
        model = live.app.extensions["turns"].deps.model
        self.requests: list[list[dict[str, Any]]] = []
        real = model.request

        def spy(
            messages: list[dict[str, Any]], tools: list[dict[str, Any]], **shape: Any
        ) -> dict[str, Any]:
            # What the model was sent, less the notes (a date, tool changes) between messages.
            self.requests.append([m for m in messages if m["role"] != "system"])
            return real(messages, tools, **shape)

        model.request = spy

    def send(self, body: dict[str, Any], status: int = 202) -> dict[str, Any]:
        """POST a turn; return its body."""
        response = self.live.post(f"/api/sessions/{self.sid}/turns", json=body)
        assert response.status_code == status, response.text
        return response.json()

    def events(self, turn_id: str) -> list[tuple[int, str, dict[str, Any]]]:
        """Read a turn's events to its end."""
        return decode(self.live.read_events(f"/api/turns/{turn_id}/events"))

    def ask(self, body: dict[str, Any]) -> tuple[dict[str, Any], list[Any]]:
        """Start a turn and read it to its end."""
        started = self.send(body)
        return started, self.events(started["turn_id"])

    def session(self) -> dict[str, Any]:
        """GET the session."""
        response = self.live.get(f"/api/sessions/{self.sid}")
        assert response.status_code == 200, response.text
        return response.json()

    def texts(self) -> list[tuple[str, str]]:
        """The active branch as (role, text) pairs, tool results left out."""
        out = []
        for m in self.session()["messages"]:
            words = " ".join(b["text"] for b in m["content"] if b.get("type") == "text")
            if words:
                out.append((m["role"], words))
        return out
