"""The audited app whose statement reader never finishes (a read ends when its client leaves
or at IMPORT_READ_WALL_SECONDS), each response naming the worker that gave it."""

from __future__ import annotations

import os

from flask import Response

from app import host
from streaming.hosting import Hosted
from tests.cluster.audited_app import create_app
from tests.statements.readers import doze

WORKER_HEADER = "X-Worker-Pid"


def hosted() -> Hosted:
    """The app, as `app.hosted()` gives it to the server."""
    app = create_app()
    app.extensions["statement_reader"].reader = doze

    @app.after_request
    def _worker(response: Response) -> Response:
        response.headers[WORKER_HEADER] = str(os.getpid())
        return response

    return host(app)
