"""The durations: every timing constant of the server, engine and page, scaled by TIME_SCALE.

Settings (config/settings.py) holds one `Timings`, read here from the environment's variables
of `TIMING_ENV` and multiplied by TIME_SCALE; the code reads `settings.timings`, never a default.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields

from config.parsing import number, parsed, unset


@dataclass(frozen=True)
class Timings:
    """Every timing constant of the server, engine and page, in seconds, scaled by TIME_SCALE.

    They only make sense at their ratios (a stall is detected before the retry budget runs
    out, a worker is presumed dead after several missed heartbeats, a store outage is waited
    out for longer than a worker takes to be presumed dead), so tests shrink them all by one
    factor and never tune one alone. Nothing else in the project holds a duration.
    """

    # The model: silence before an attempt is abandoned, and the waits between attempts.
    stall_timeout: float = 60.0
    first_token_timeout: float = 120.0
    retry_budget: float = 60.0
    backoff_base: float = 0.5
    backoff_cap: float = 8.0
    model_connect: float = 10.0
    model_write: float = 30.0
    # A request near the window is counted by the API first; past this the estimate decides.
    count_tokens: float = 5.0
    # Tools: how long one may run before it becomes an `is_error` result.
    tool_timeout: float = 20.0
    # MCP servers: one call's deadline, connecting (and the first listing at start), the
    # waits between reconnects, and the ping that finds a server gone.
    mcp_call_timeout: float = 30.0
    mcp_connect: float = 10.0
    mcp_backoff_base: float = 0.5
    mcp_backoff_cap: float = 30.0
    mcp_ping: float = 15.0
    # Workers: one heartbeat for all of a worker's turns (it also polls cancels and leases);
    # another worker takes the turns of one silent for `stale_after`.
    heartbeat: float = 1.0
    stale_after: float = 6.0
    reaper_interval: float = 1.0
    forget_workers: float = 3600.0
    drain: float = 20.0
    # The store (database): an outage is waited out this long before a turn fails, retrying
    # with backoff. No wait for the database is without end (models/deadlines.py): a connect
    # gives up after `store_connect`, a wait for a pooled connection after `store_checkout`;
    # PostgreSQL cancels a statement after `store_statement` and a lock wait after
    # `store_lock` (SQLite's writers wait as long for the write lock); the client gives up on
    # an answer after `store_answer` (a server that accepts and never answers); TCP
    # keepalives probe an idle connection after `store_keepalive`.
    store_outage: float = 120.0
    store_backoff_base: float = 0.05
    store_backoff_cap: float = 2.0
    store_connect: float = 5.0
    store_checkout: float = 5.0
    store_statement: float = 4.0
    store_lock: float = 3.0
    store_answer: float = 5.0
    store_keepalive: float = 5.0
    # The event log: Redis retries, its writer's coalescing, its followers' blocking reads;
    # how long finished logs stay in memory and streams in Redis.
    log_backoff_base: float = 0.05
    log_backoff_cap: float = 2.0
    log_coalesce: float = 0.005
    log_block: float = 0.1
    log_gather: float = 0.003
    log_connect: float = 5.0
    log_retain: float = 60.0
    log_expire: float = 3600.0
    # Readers: keep-alive comments, and how long an idle reader waits before asking storage.
    keepalive: float = 15.0
    idle_check: float = 1.0
    token_poll: float = 2.0
    # Streams under load read at a shared beat (added latency, for CPU per event); a read
    # that took longer than `network_wait` waited for the network.
    stream_batch: float = 0.04
    network_wait: float = 0.002
    # The HTTP server: whole request headers, then the whole body, must arrive in time; a
    # client that reads nothing for `slow_reader` is dropped; accept() pauses after a failure.
    header_timeout: float = 10.0
    body_timeout: float = 10.0
    slow_reader: float = 30.0
    accept_pause: float = 0.1
    graceful_shutdown: float = 30.0
    # A side-effect tool waits this long for the user's approval before it is declined;
    # the upkeep looks for expired requests every `approval_sweep`.
    approval_ttl: float = 86400.0
    approval_sweep: float = 30.0
    # The chat page asks this often whether another tab decided an approval card it shows.
    page_poll: float = 4.0
    # What clients are told to wait (Retry-After): busy, storage down, this worker restarting.
    busy_retry_after: float = 5.0
    outage_retry_after: float = 5.0
    restart_retry_after: float = 1.0
    # A search answers what it found within `search_budget` (a partial page and a cursor
    # past that); one refused because too many run is told to retry after `search_retry_after`.
    search_budget: float = 0.5
    search_retry_after: float = 1.0
    # A statement file is read within `import_read_wall` (its reader process is killed
    # then); an upload refused because too many run is told to retry after
    # `import_retry_after`.
    import_read_wall: float = 15.0
    import_retry_after: float = 2.0
    # An upload holds one of its user's places (services/imports/slots.py) for the read's
    # wall limit and `import_slot_margin` more (to store the draft's rows; renewed once when
    # the read ends): a place its killed worker never gave back is taken over after that.
    import_slot_margin: float = 30.0
    # A statement import writes a batch of rows at least this often while it drafts, commits
    # or undoes; one still for longer lost its worker, and the user may resume or undo it.
    import_stall: float = 60.0
    # The import dialog asks this often how far a draft, commit or undo it waits for is.
    import_poll: float = 0.5
    # The signed token of an `events_url` (a browser's EventSource) works this long.
    events_token_max_age: float = 3600.0
    # The connector's OAuth: an authorization code, an access token and a refresh token live
    # this long; a client ID metadata document is fetched within `cimd_fetch` and kept at
    # most `cimd_cache`; an app has `mcp_request_state` to answer an approval it was asked; a
    # registered client that no user connected within `oauth_unused_client` is forgotten.
    oauth_code: float = 300.0
    oauth_access: float = 3600.0
    oauth_refresh: float = 604_800.0
    cimd_fetch: float = 5.0
    cimd_cache: float = 3600.0
    mcp_request_state: float = 600.0
    oauth_unused_client: float = 86400.0

    def scaled(self, factor: float) -> Timings:
        """Return every constant multiplied by `factor`."""
        return Timings(**{f.name: getattr(self, f.name) * factor for f in fields(self)})


# Environment variable of each timing that can be set alone, as documented in docs/.
TIMING_ENV = {
    "stall_timeout": "STALL_TIMEOUT",
    "first_token_timeout": "FIRST_TOKEN_TIMEOUT",
    "retry_budget": "UPSTREAM_RETRY_BUDGET",
    "backoff_base": "UPSTREAM_BACKOFF_BASE",
    "tool_timeout": "TOOL_TIMEOUT",
    "mcp_call_timeout": "MCP_CALL_TIMEOUT",
    "heartbeat": "HEARTBEAT_SECONDS",
    "stale_after": "STALE_TURN_SECONDS",
    "keepalive": "KEEPALIVE_SECONDS",
    "drain": "DRAIN_SECONDS",
    "token_poll": "TOKEN_POLL_SECONDS",
    "stream_batch": "STREAM_BATCH_SECONDS",
    "store_outage": "STORE_OUTAGE_SECONDS",
    "header_timeout": "HEADER_TIMEOUT",
    "approval_ttl": "APPROVAL_TTL",
    "body_timeout": "BODY_TIMEOUT",
    "search_budget": "SEARCH_BUDGET_SECONDS",
    "import_read_wall": "IMPORT_READ_WALL_SECONDS",
    "events_token_max_age": "EVENTS_TOKEN_MAX_AGE",
    "oauth_access": "OAUTH_ACCESS_TOKEN_SECONDS",
    "oauth_refresh": "OAUTH_REFRESH_TOKEN_SECONDS",
}


def read_timings(source: Mapping[str, object]) -> Timings:
    """The Timings `source` sets (each by its variable of TIMING_ENV), not yet scaled."""
    values = {
        name: parsed(env, number, source[env])
        for name, env in TIMING_ENV.items()
        if not unset(source.get(env))
    }
    return Timings(**values)
