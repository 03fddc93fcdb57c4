"""The turn service: starts turns in the background, cancels them, serves their events."""

from __future__ import annotations

import logging
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from engine.eventlog import Chunk, EventLog, MemoryEventLog, frames_after
from engine.model_client import build_model_client
from engine.replay import replay_turn
from engine.retry import RetryPolicy
from engine.store import NewTurn, TurnStore
from engine.tool_exec import ToolExecutor
from engine.turn import TurnDeps, TurnRunner
from models.chat import TURN_RUNNING
from models.db import Database
from tools import default_registry

log = logging.getLogger(__name__)

WATCH_INTERVAL = 0.2
# A turn that ended this recently may still be writing its archive.
ARCHIVE_GRACE = 5.0
CANCEL_POLL = 1.0


class TurnService:
    """Owns the running turns of this process and the heartbeat that marks them alive."""

    def __init__(
        self,
        deps: TurnDeps,
        heartbeat_seconds: float = 5.0,
        stall_timeout: float = 60.0,
        first_token_timeout: float = 120.0,
    ) -> None:
        self.deps = deps
        self.store: TurnStore = deps.store
        self.events: EventLog = deps.events
        self._runners: dict[str, TurnRunner] = {}
        self._threads: dict[str, threading.Thread] = {}
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._stall, self._first_token = stall_timeout, first_token_timeout
        self._supervisor = threading.Thread(
            target=self._supervise, args=(heartbeat_seconds,), name="turn-supervisor", daemon=True
        )
        self._supervisor.start()

    def start(self, user_id: int, session_id: str | None, text: str) -> NewTurn:
        """Store the user message (new session if None) and start the turn in the background."""
        new = self.store.start_turn(user_id, session_id, text)
        self.events.open(new.turn_id)
        runner = TurnRunner(self.deps, new, user_id)
        thread = threading.Thread(
            target=self._run, args=(runner,), daemon=True, name=f"turn-{new.turn_id}"
        )
        with self._lock:
            self._runners[new.turn_id] = runner
            self._threads[new.turn_id] = thread
        try:
            thread.start()
        except RuntimeError:
            # No thread could be had: end the turn now rather than leave it "running".
            with self._lock:
                self._runners.pop(new.turn_id, None)
                self._threads.pop(new.turn_id, None)
            runner.fail_to_start()
            raise
        return new

    def _run(self, runner: TurnRunner) -> None:
        try:
            runner.run()
        finally:
            with self._lock:
                self._runners.pop(runner.turn.turn_id, None)
                self._threads.pop(runner.turn.turn_id, None)

    def cancel(self, turn_id: str) -> None:
        """Stop a running turn, here or (through the database flag) in another worker."""
        with self._lock:
            runner = self._runners.get(turn_id)
        if runner is not None:
            runner.cancel()
        else:
            self.store.request_cancel(turn_id)

    def read(self, turn_id: str, after: int, timeout: float, check_store: bool = True) -> Chunk:
        """Return events after `after`: live from the log, else archived, else rebuilt.

        `check_store` lets an idle read look in the database for a turn that ended without
        its live log saying so (its worker died, or Redis lost the end); readers pass it
        once they have been idle for a while, so a busy stream never queries the database.
        """
        try:
            chunk = self.events.read(turn_id, after, timeout)
        except Exception:
            log.exception("event log read failed for %s; using the database", turn_id)
            chunk = None
        if chunk is not None and (chunk.frames or chunk.finished or not check_store):
            return chunk
        self.store.interrupt_stale()
        status, age, archive = self.store.stored_turn(turn_id)
        if archive is not None:
            frames, last = frames_after(archive, after)
            return Chunk(frames, last, True)
        if status is None or status == TURN_RUNNING or (age or 0) < ARCHIVE_GRACE:
            if chunk is None:
                # Run by another worker with an in-process log: poll, do not spin.
                time.sleep(min(timeout, 1.0))
            return chunk or Chunk(b"", after, False)
        return replay_turn(self.store.db, turn_id, after)

    def expire_stale(self) -> None:
        """Mark turns whose worker died (no heartbeat) as interrupted."""
        self.store.interrupt_stale()

    def wait(self, turn_id: str, timeout: float = 30.0) -> bool:
        """Block until the turn's thread ends (for tests and shutdown); True if it did."""
        with self._lock:
            thread = self._threads.get(turn_id)
        if thread is not None:
            thread.join(timeout)
            return not thread.is_alive()
        return True

    def running(self) -> list[str]:
        """Return the ids of turns running in this process."""
        with self._lock:
            return list(self._runners)

    def _supervise(self, heartbeat: float) -> None:
        """Watch every running turn for stalls and cancels; beat their heartbeats."""
        next_beat = time.monotonic() + heartbeat
        next_poll = time.monotonic() + CANCEL_POLL
        while not self._stop.wait(WATCH_INTERVAL):
            with self._lock:
                runners = list(self._runners.values())
            now = time.monotonic()
            for runner in runners:
                try:
                    runner.watch(now, self._stall, self._first_token)
                except Exception:
                    log.exception("watchdog failed for %s", runner.turn.turn_id)
            if now >= next_beat:
                next_beat = now + heartbeat
                self._beat(runners)
            elif runners and now >= next_poll:
                next_poll = now + CANCEL_POLL
                self._poll_cancels(runners)

    def _poll_cancels(self, runners: list[TurnRunner]) -> None:
        # One query for all local turns, so a cancel sent to another worker lands in ~1 s.
        try:
            flagged = self.store.cancel_requested([r.turn.turn_id for r in runners])
        except Exception:
            log.exception("could not poll cancel requests")
            return
        for runner in runners:
            if runner.turn.turn_id in flagged:
                runner.cancel()

    def _beat(self, runners: list[TurnRunner]) -> None:
        for runner in runners:
            try:
                if self.store.beat(runner.turn.turn_id, runner.rounds):
                    runner.cancel()
            except Exception:
                log.exception("heartbeat failed for %s", runner.turn.turn_id)

    def shutdown(self, timeout: float = 10.0) -> None:
        """Cancel running turns and wait for them to end."""
        self._stop.set()
        for turn_id in self.running():
            self.cancel(turn_id)
        for turn_id in list(self._threads):
            self.wait(turn_id, timeout)
        close = getattr(self.events, "close", None)
        if close is not None:
            close()


def build_turn_service(config: dict[str, Any], db: Database) -> TurnService:
    """Wire the model client, tools, store and event log from the app config."""
    # Stale turns are expired lazily (on reads and new turns): the schema may not exist yet
    # when the app is built, e.g. for `flask db-upgrade` on a fresh database.
    store = TurnStore(db, stale_after=config["STALE_TURN_SECONDS"])
    registry = default_registry()
    pool = ThreadPoolExecutor(max_workers=config.get("TOOL_WORKERS", 8), thread_name_prefix="tool")
    deps = TurnDeps(
        store=store,
        events=make_event_log(config["EVENT_LOG_URL"]),
        model=build_model_client(config),
        tools=ToolExecutor(registry, store, db, pool, config["TOOL_TIMEOUT"]),
        tool_definitions=registry.definitions(),
        max_rounds=config["MAX_TOOL_ROUNDS"],
        retry=RetryPolicy(
            max_retries=config["UPSTREAM_MAX_RETRIES"],
            budget=config["UPSTREAM_RETRY_BUDGET"],
            base=config["UPSTREAM_BACKOFF_BASE"],
        ),
    )
    return TurnService(
        deps,
        heartbeat_seconds=config["HEARTBEAT_SECONDS"],
        stall_timeout=config["STALL_TIMEOUT"],
        first_token_timeout=config["FIRST_TOKEN_TIMEOUT"],
    )


def make_event_log(url: str) -> EventLog:
    """Return the in-process log for `memory://`, a Redis Streams log for `redis://...`."""
    if url.startswith(("redis://", "rediss://", "unix://")):
        from engine.redis_eventlog import RedisEventLog

        return RedisEventLog(url)
    if url != "memory://":
        raise ValueError(f"EVENT_LOG_URL must be memory:// or redis://..., not {url!r}")
    return MemoryEventLog()
