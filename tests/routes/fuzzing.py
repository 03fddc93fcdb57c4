"""schemathesis against the live server with a real token: what its three modules share.

`test_schemathesis_positive.py` and `test_schemathesis_negative.py` send every operation valid
and invalid requests generated from /openapi.json; `test_schemathesis_links.py` walks the
document's links (create session -> start turn -> read events -> cancel -> delete) by hand and
as schemathesis' state machine. Every response must conform (status, content type, headers, body
schema), no response is a 5xx, and a request answered 4xx writes nothing. Three modules, so
that the heavy phase's two workers (a module to a worker) share the work.
"""

from __future__ import annotations

import shutil
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx2
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from requests.structures import CaseInsensitiveDict
from schemathesis import Case, CheckContext, CheckFunction, GenerationMode
from schemathesis.checks import load_all_checks, run_checks, run_checks_for
from schemathesis.config import ChecksConfig
from schemathesis.core.failures import Failure, FailureGroup, failure_report_title
from schemathesis.core.transport import Response
from schemathesis.engine.run import PhaseName
from schemathesis.specs.openapi.checks import positive_data_acceptance
from schemathesis.transport.requests import ManagedCookiesSession
from sqlalchemy import func, select

from demo_data.generator import seed_finance
from models import ApiToken, ChatSession, Turn, UIChat
from tests.conftest import app_settings, close_app, make_user
from tests.live import LiveServer

EXAMPLES = 40  # per operation and mode: about 60 operations x 40 = 2,400 requests a mode
# The operations of a mode in parts, a test each, so that its module counts as large and the
# heavy phase (`--dist loadscope`, larger modules first) starts it early, not in its tail.
PARTS = 4
REFUSABLE = {
    ("POST", "/api/ui/chat"),
    ("POST", "/api/tokens"),
    ("POST", "/api/sessions/{session_id}/turns"),
    ("POST", "/api/turns/{turn_id}/approvals"),
    ("PUT", "/api/sessions/{session_id}/active_leaf"),
    ("GET", "/api/transactions"),
    ("POST", "/api/imports"),
    ("PATCH", "/api/imports/{import_id}/rows/{row_id}"),
    ("POST", "/api/transactions"),
    ("PATCH", "/api/transactions/{transaction_id}"),
    ("POST", "/api/accounts"),
    ("POST", "/api/categories"),
    ("POST", "/api/category-rules"),
    ("PUT", "/api/transactions/{transaction_id}/flow"),
    ("GET", "/oauth/authorize"),
    ("POST", "/oauth/authorize"),
    ("POST", "/oauth/token"),
    ("POST", "/oauth/register"),
    ("POST", "/oauth/revoke"),
    ("POST", "/mcp"),
}
SETTINGS: dict[str, Any] = {
    "deadline": None,
    "database": None,
    "derandomize": True,
    "phases": [Phase.explicit, Phase.generate],
    "suppress_health_check": list(HealthCheck),
}
# Sessions, turns and AI SDK chats: only requests write them. One statement, not an ORM
# session and three queries: it runs before and after each of thousands of requests.
ROWS = select(
    *(select(func.count()).select_from(m).scalar_subquery() for m in (ChatSession, Turn, UIChat))
)


class Audit:
    """Counts requests and statuses; checks that a refused request wrote nothing."""

    def __init__(self, live: LiveServer) -> None:
        self.live, self.statuses = live, Counter[int]()
        # Every failed check, kept as it happens (Hypothesis may report a replay instead).
        self.problems: list[str] = []
        self.operations = Counter[tuple[str, str, int]]()
        self.headers = dict(live.headers)
        self.engine = live.app.extensions["db"].engine
        with live.app.extensions["db"].read() as s:
            # The token the run uses (a module's earlier tests may have made others).
            token = self.headers["Authorization"].removeprefix("Bearer ")
            self.own_token = s.scalar(
                select(ApiToken.id).where(ApiToken.token_hash == ApiToken.hash(token))
            )
        assert self.own_token is not None
        # One connection pool for every request and the checks' own (as schemathesis' runner
        # keeps one): a new connection per request cost more than the request. Cookies a
        # response sets are dropped before the next request, as with a session per request.
        self.session = ManagedCookiesSession()
        # What a schemathesis run shares across its requests (`validate`).
        self.configs: dict[tuple[str, PhaseName | None], ChecksConfig] = {}
        self.enforced: set[str] = set()

    def close(self) -> None:
        self.session.close()

    def spare_own_token(self, case: Case) -> None:
        """Revoking the token the run uses would turn every later request into a 401."""
        params = case.path_parameters or {}
        if case.path == "/api/tokens/{token_id}" and params.get("token_id") == self.own_token:
            case.path_parameters = {**params, "token_id": self.own_token + 1_000_000}

    def rows(self) -> tuple[int, ...]:
        """How many sessions, turns and AI SDK chats there are."""
        with self.engine.connect() as conn:
            return tuple(conn.execute(ROWS).one())

    def call(self, case: Case) -> Any:
        """Send the case with the token, validate the response, audit writes."""
        try:
            return self._call(case)
        except Exception as exc:
            self.problems.append(f"{case.method} {case.path}: {type(exc).__name__}: {exc}")
            raise

    def _call(self, case: Case) -> Any:
        before = self.rows()
        self.spare_own_token(case)
        case.headers = {**(case.headers or {}), **self.headers}  # the real token, always
        # JSON Schema cannot say what these bodies must be, so schema-valid ones may be refused
        # (422): POST /api/ui/chat needs the *newest* message to be the user's text (an array's
        # last item); POST /api/tokens an `expires_at` in the next ten years, from now; a turn
        # either a message or a regenerate, naming messages of the session; an approval a
        # call the turn asked about; a branch switch a message of the session; a transactions
        # query an account and category the user has, and a period that ends after it starts;
        # a statement file one that parses; a new account or category a name not yet taken,
        # a transaction or rule a category (and account) the user has; a row an include
        # that is not of an invalid row; a refund mark (or its undoing) a row of money in; an
        # OAuth request a registered client, its redirect URI and a code or token it was given;
        # an MCP message no NUL in any key (as every JSON body, 422).
        refusable = (case.method, case.path) in REFUSABLE
        excluded: list[CheckFunction] = [positive_data_acceptance] if refusable else []
        response = case.call(base_url=self.live.url, session=self.session, headers=self.headers)
        self.validate(case, response, excluded)
        self.statuses[response.status_code] += 1
        self.operations[(case.method, case.path, response.status_code)] += 1
        assert response.status_code < 500, (case.method, case.path, response.text)
        if response.status_code >= 400:
            assert self.rows() == before, (case.method, case.path, response.status_code)
        return response

    def validate(self, case: Case, response: Response, excluded: list[CheckFunction]) -> None:
        """Every check `Case.validate_response` runs, with what a schemathesis run (its CLI's
        engine) shares across requests instead of building it again for each response: the
        checks' configuration of each operation and phase, and the operations shown to refuse a
        request without a token and with a wrong one. `ignored_auth` sends those two probes
        once an operation answers a 2xx, once per operation and run as in a schemathesis run,
        not after each 2xx (a third of all requests were probes)."""
        load_all_checks()
        schema = case.operation.schema
        phase = PhaseName.from_str(case.meta.phase.name.value) if case.meta is not None else None
        key = (case.operation.label, phase)
        config = self.configs.get(key)
        if config is None:
            config = self.configs[key] = schema.config.checks_config_for(
                operation=case.operation, phase=None if phase is None else phase.value
            )
        ctx = CheckContext(
            override=case._override,
            auth=None,
            headers=CaseInsensitiveDict(self.headers),
            config=config,
            transport_kwargs={
                "base_url": self.live.url,
                "session": self.session,
                "headers": dict(self.headers),
            },
            response_checks=run_checks_for(schema).for_responses(),
            phase=phase,
            auth_enforced_operations=self.enforced,
        )

        def on_failure(name: str, collected: set[Failure], failure: Failure) -> None:
            collected.add(failure)

        checks = [check for check in ctx.internals.checks if check not in excluded]
        failures = list(
            run_checks(case=case, response=response, ctx=ctx, checks=checks, on_failure=on_failure)
        )
        if failures:
            raise FailureGroup(failures, failure_report_title(failures) + "\n" + str(failures))

    @property
    def total(self) -> int:
        """Requests sent."""
        return sum(self.statuses.values())

    def report(self, least: int, succeeding: bool = True) -> None:
        """Print what was sent; fail on any problem, any 5xx, fewer than `least` requests and,
        if `succeeding`, none answered 2xx (invalid requests may all be refused)."""
        assert not self.problems, self.problems
        print(
            f"schemathesis: {self.total} requests, statuses {dict(sorted(self.statuses.items()))}"
        )
        for key, n in sorted(self.operations.items()):
            print(*key, n)
        assert self.total >= least, self.total
        # Every request was sent with a token that still works: a 401 is documented for every
        # operation, so a revoked token would pass every check above while testing nothing.
        assert self.live.get("/api/tokens").status_code == 200, "the run's token was revoked"
        assert not any(status >= 500 for status in self.statuses)
        assert not succeeding or any(200 <= status < 300 for status in self.statuses)


def audited(live: LiveServer, user: tuple[int, str]) -> Iterator[Audit]:
    """The audit of the live server's calls (the body of each module's `audit` fixture)."""
    # Finance records to find, so the records' 200s are checked against the document too.
    seed_finance(live.app.extensions["db"], user[0], months=3, seed=5)
    audit = Audit(live)
    yield audit
    audit.close()


@dataclass(frozen=True)
class Fuzzed:
    """A module's live server and the document it serves (the `fuzzed` fixture)."""

    live: LiveServer
    schema: Any


@contextmanager
def serving(template: Path, folder: Path) -> Iterator[LiveServer]:
    """A live server for a module's tests: its app, database, user (with finance records) and
    token; each test audits its own requests (the audit compares counts, not a fresh database)."""
    from app import create_app

    shutil.copy(template, folder / "fuzz.db")
    app = create_app(app_settings(f"sqlite:///{folder / 'fuzz.db'}", folder))
    try:
        user_id, token = make_user(app.extensions["db"], "alice")
        seed_finance(app.extensions["db"], user_id, months=3, seed=5)
        live = LiveServer(app, token)
        try:
            yield live
        finally:
            live.close()
    finally:
        close_app(app)


def load(live: LiveServer) -> Any:
    """The document the live server serves."""
    spec = httpx2.get(live.url + "/openapi.json", timeout=10).json()
    schema = schemathesis.openapi.from_dict(spec)
    schema.config.max_stream_events = 100_000  # read every stream to its end (turns end fast)
    # JSON Schema cannot say how many events a turn has: a schema-valid Last-Event-ID past
    # the last one is refused with the documented 416, the only operation that answers it.
    acceptance = schema.config.checks.positive_data_acceptance
    acceptance.expected_statuses = [*acceptance.expected_statuses, "416"]  # a copy: shared default
    return schema


def fuzz_part(fuzzed: Fuzzed, mode: GenerationMode, part: int) -> None:
    """Fuzz the `part`th of PARTS of the operations in `mode` with an audit of its own, and
    report it: at least 1000 / PARTS requests, and (valid requests) some succeeding."""
    audit = Audit(fuzzed.live)
    try:
        fuzz(fuzzed.schema, audit, mode, part, PARTS)
        audit.report(least=1000 // PARTS, succeeding=mode == GenerationMode.POSITIVE)
    finally:
        audit.close()


def fuzz(schema: Any, audit: Audit, mode: GenerationMode, part: int, parts: int) -> None:
    """Send every `parts`th operation from the `part`th EXAMPLES requests generated in `mode`,
    each one audited."""
    for result in list(schema.get_all_operations())[part::parts]:
        operation = result.ok()

        @given(case=operation.as_strategy(generation_mode=mode))
        @settings(max_examples=EXAMPLES, **SETTINGS)
        def run(case: Case) -> None:
            audit.call(case)

        try:
            run()
        except Unsatisfiable:
            assert mode == GenerationMode.NEGATIVE  # nothing to get wrong (GET /healthz)
