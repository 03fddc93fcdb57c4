"""The cluster soak's clients: sessions that ask, queue messages behind a running turn, and
approve or decline the actions the model asks for, as careful clients do while workers die
and the database or Redis is out under them."""

from __future__ import annotations

import random
import threading
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

import httpx2

from streaming.wire.protocol import decode_stream
from tests.cluster.conftest import QUESTIONS
from tests.cluster.follower import Follower
from tests.cluster.process import Cluster
from tests.waits import wait_until

# Sessions by kind, by their index: a plain question, three messages (the second and third
# queued behind the first), and a budget change the user approves (once or from two clients
# at once) or declines.
KINDS = ("plain", "queued", "plain", "approval")
FOLLOW_SECONDS = 300


@dataclass
class Tracked:
    """One turn of a session and the client that followed it to its end."""

    turn: dict[str, Any]
    follower: Follower
    role: str  # "first", "queued" (sent while a turn ran), "paused", "continuation"
    queued: bool = False

    @property
    def status(self) -> str:
        """The status its turn_end showed."""
        return decode_stream(self.follower.stitched)[-1][2]["status"]

    def requests(self) -> list[dict[str, Any]]:
        """The approval requests it showed."""
        events = decode_stream(self.follower.stitched)
        return [d for _, t, d in events if t == "approval_requested"]


@dataclass
class Decided:
    """One approval request and what the user said to it."""

    turn_id: str
    tool_use_id: str
    approved: bool
    posts: int  # 2: two clients at once
    late: bool = False  # the answer named no continuation yet: a reaper started it later


@dataclass
class SessionRun:
    """What one soak session asked and what came of it."""

    index: int
    kind: str
    session_id: str = ""
    questions: list[str] = field(default_factory=list)
    turns: list[Tracked] = field(default_factory=list)
    decisions: list[Decided] = field(default_factory=list)


def retrying(call: Any) -> Any:
    """Call until no worker dies under the request and the database answers (reads, session
    creation and decisions, which are idempotent). The pauses are a client's, between tries."""
    for _ in range(400):
        try:
            response = call()
        except httpx2.TransportError:
            time.sleep(0.1)
            continue
        if response.status_code != 503:
            return response
        time.sleep(0.25)
    raise AssertionError("the cluster never answered")


def ask(http: Any, sid: str, question: str) -> dict[str, Any]:
    """Send a message to a session (the default busy policy: queued behind a running turn).

    Sent with a `client_id` and sent again, unchanged, until a worker answers 202: a worker
    that died under the request, or a 503 whose commit went through, started it at most once.
    The pauses are a client's, between tries.
    """
    body = {"message": question, "client_id": uuid.uuid4().hex}
    for _ in range(200):
        try:
            response = http.post(f"/api/sessions/{sid}/turns", json=body)
        except httpx2.TransportError:
            time.sleep(0.1)
            continue
        if response.status_code == 202:
            return response.json()
        # A draining worker, or the database out: try again (another worker, or later).
        assert response.status_code == 503, response.text
        time.sleep(0.1 if response.json()["error"]["code"] == "server_restarting" else 0.5)
    raise AssertionError("no worker would start the turn")


def follow(url: str, turn: dict[str, Any], role: str, seed: int, queued: bool = False) -> Tracked:
    """Follow a turn to its end, dropping the connection at random points."""
    follower = Follower(url, turn["events_url"], random.Random(seed))
    follower.run(FOLLOW_SECONDS)
    return Tracked(turn, follower, role, queued)


def decide(clients: list[Any], turn_id: str, tool_use_id: str, approved: bool) -> bool:
    """Post one decision from every client at once; return whether any answer named the
    turn that goes on (none does when the paused turn's end was not recorded yet)."""
    body = {"tool_use_id": tool_use_id, "approved": approved}
    answers: list[Any] = [None] * len(clients)

    def post(k: int) -> None:
        path = f"/api/turns/{turn_id}/approvals"
        answers[k] = retrying(lambda: clients[k].post(path, json=body))

    threads = [threading.Thread(target=post, args=(k,)) for k in range(len(clients))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for answer in answers:
        assert answer is not None and answer.status_code == 200, answer and answer.text
    named = {a.json()["continuation_turn_id"] for a in answers} - {None}
    assert len(named) <= 1, f"two continuations of {turn_id}: {named}"
    return bool(named)


def continuation(http: Any, paused_id: str, timeout: float = FOLLOW_SECONDS) -> dict[str, Any]:
    """The turn that went on from a paused one, once there is one."""

    def went_on() -> dict[str, Any] | None:
        shown = retrying(lambda: http.get(f"/api/turns/{paused_id}")).json()
        return shown if shown["continued_by"] is not None else None

    shown = wait_until(
        went_on, timeout, f"{paused_id}: decided, but nothing went on from it", every=0.2
    )
    following, path = shown["continued_by"], f"/api/turns/{shown['continued_by']}"
    turn = retrying(lambda: http.get(path)).json()
    return {**turn, "turn_id": following, "session_id": shown["session_id"]}


def run_session(cluster: Cluster, token: str, index: int) -> SessionRun:
    """Drive one session of its kind to its end."""
    run = SessionRun(index, KINDS[index % len(KINDS)])
    rng = random.Random(index)
    with cluster.client(token) as http:
        run.session_id = sid = retrying(lambda: http.post("/api/sessions")).json()["id"]
        if run.kind == "approval":
            run.questions = [f"Raise my groceries budget to {100 + index} (#{index})"]
        else:
            asks = 3 if run.kind == "queued" else 1
            run.questions = [
                f"{QUESTIONS[(index + k) % len(QUESTIONS)]} (#{index})" for k in range(asks)
            ]
        # The second and third are sent at once, while the first runs: queued behind it.
        started = [ask(http, sid, question) for question in run.questions]
        for k, turn in enumerate(started):
            role, queued = ("queued" if k else "first"), turn.get("status") == "queued"
            run.turns.append(follow(cluster.url, turn, role, rng.randrange(1 << 30), queued))
        while run.turns[-1].status == "awaiting_approval":
            paused = run.turns[-1]
            paused.role = "paused"
            for request in paused.requests():
                roll = rng.random()  # approved 70% (twice at once 30%), declined 30%
                approved, posts = roll < 0.7, 2 if roll < 0.3 else 1
                decided = Decided(paused.turn["turn_id"], request["tool_use_id"], approved, posts)
                clients = [http] + [cluster.client(token) for _ in range(posts - 1)]
                try:
                    named = decide(clients, decided.turn_id, decided.tool_use_id, approved)
                finally:
                    for other in clients[1:]:
                        other.close()
                decided.late = not named
                run.decisions.append(decided)
            following = continuation(http, paused.turn["turn_id"])
            seed = rng.randrange(1 << 30)
            run.turns.append(follow(cluster.url, following, "continuation", seed))
    return run
