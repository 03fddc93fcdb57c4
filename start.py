"""`make run` in one process: check the port, migrate, seed the demo user once, print their
token, then serve the app with gunicorn (our worker, gunicorn.conf.py) from this process.

The app is imported and built once, here; gunicorn's workers are forked from this process
with it loaded, so a restart costs one import of the app instead of five. The last line
printed, once the server serves, is the link that opens the chat page signed in.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from gunicorn.app.base import Application

from server.ports import port_in_use

ROOT = Path(__file__).resolve().parent
CONFIG = ROOT / "gunicorn.conf.py"
HOST = "127.0.0.1"


class Serving(Application):  # type: ignore[misc]
    """gunicorn serving an app built before it starts, configured by gunicorn.conf.py."""

    def __init__(self, port: int, workers: int) -> None:
        self.port, self.workers = port, workers
        self.hosted: Any = None
        self.banner = ""
        super().__init__(prog="make run")

    def load_config(self) -> None:
        """gunicorn.conf.py (which readies the metrics folder before the app is imported),
        then where to listen and how many workers."""
        self.load_config_from_file(str(CONFIG))
        self.cfg.set("bind", [f"{HOST}:{self.port}"])
        self.cfg.set("workers", self.workers)

    def load(self) -> Any:
        """The app, as built before gunicorn started (a forked worker has it already)."""
        return self.hosted

    def serving(self, worker: Any) -> None:
        """Called by a worker once it serves: the first one prints the banner."""
        if worker.age == 1:
            print(self.banner, flush=True)


def main(argv: list[str] | None = None) -> int:
    """Run `make run`'s steps; serve until stopped."""
    parser = argparse.ArgumentParser(prog="make run", description=__doc__)
    parser.add_argument("--port", type=int, default=5000)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--user", default="demo", help="the demo user")
    args = parser.parse_args(argv)
    # Before anything is loaded: a second `make run` stops here at once.
    try:
        busy = port_in_use(HOST, args.port)
    except OSError as err:
        print(f"Error: cannot serve on {HOST}:{args.port}: {err.strerror}", file=sys.stderr)
        return 1
    if busy:
        print(
            f"Error: port {args.port} is in use: is `make run` already running? "
            "Stop it, or set PORT=... to serve on another port.",
            file=sys.stderr,
        )
        return 1
    serving = Serving(args.port, args.workers)

    from app import create_app, host
    from cli import kept_demo_token
    from demo_data.commands import seed_user, seeded_words
    from models.migrate import upgrade

    app = create_app()
    upgrade(app.config["SETTINGS"].database_url)
    print("database is at head", flush=True)
    db = app.extensions["db"]
    # A restart never changes data: the demo user is seeded only while they have none.
    user_id, summary = seed_user(db, args.user, if_empty=True)
    print(seeded_words(args.user, user_id, summary), flush=True)
    token = kept_demo_token(db, app.instance_path, args.user)
    db.dispose()  # the workers open their own connections
    url = f"http://{HOST}:{args.port}"
    print(
        f"\nAPI token for user '{args.user}' (send as 'Authorization: Bearer <token>'):\n"
        f"{token}\n\nTry the API:\n"
        f"  curl -N -H 'Authorization: Bearer {token}' -H 'Content-Type: application/json' \\\n"
        """       -d '{"message": "What did I spend on groceries last month?"}' \\\n"""
        f"       {url}/api/chat/stream\n",
        flush=True,
    )
    serving.hosted = host(app)
    serving.banner = (
        f"Serving on {url}. The chat page, signed in as '{args.user}' (open this link):\n"
        f"  {url}/#token={token}"
    )
    serving.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
