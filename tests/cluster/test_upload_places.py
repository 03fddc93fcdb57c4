"""A user's uploads at once are bounded across the workers: with two uploads of theirs reading
(IMPORT_CONCURRENCY=2), every worker refuses the next one with 429 `import_busy`, a worker
that runs none of them too; once they end, their places are free again."""

from __future__ import annotations

import json

from sqlalchemy import func, select

from models import ImportSlot
from tests.cluster.conftest import Deployment
from tests.cluster.process import Cluster
from tests.cluster.upload_app import WORKER_HEADER
from tests.imports.conftest import SAMPLES
from tests.imports.test_upload_limits import multipart
from tests.rawhttp import Client
from tests.waits import wait_until

PLACES = 2
TRIES = 40  # new connections until each worker has answered one


def test_a_users_uploads_are_bounded_across_workers(deployment: Deployment) -> None:
    env = {
        **deployment.env,
        "IMPORT_CONCURRENCY": str(PLACES),
        "IMPORT_PROCESS_CONCURRENCY": "4",
        # Scaled by TIME_SCALE: 30 s, more than the test takes; the reads end when their
        # clients leave.
        "IMPORT_READ_WALL_SECONDS": "120",
    }
    body, kind = multipart("a.csv", (SAMPLES / "german.csv").read_bytes(), account_name="Giro")
    headers = {"Content_Type": kind, "Authorization": f"Bearer {deployment.token}"}

    def held() -> int:
        with deployment.db.read() as s:
            return int(s.scalar(select(func.count()).select_from(ImportSlot)) or 0)

    app = "tests.cluster.upload_app:hosted()"
    with Cluster(env, workers=2, log=deployment.log, app=app) as cluster:
        workers = {str(pid) for pid in cluster.worker_pids()}
        reading = [Client(cluster.port) for _ in range(PLACES)]
        for client in reading:
            client.request("POST", "/api/imports", body, **headers)
        wait_until(lambda: held() == PLACES, message="the two uploads were not admitted")
        answered: set[str] = set()
        tries = 0
        while tries < TRIES:
            tries += 1
            client = Client(cluster.port)
            client.request("POST", "/api/imports", body, **headers)
            reply = client.reply()
            client.close()
            assert reply.status == 429, reply.body
            error = json.loads(reply.body)["error"]
            assert error["code"] == "import_busy" and error["details"]["limit"] == PLACES
            answered.add(reply.headers[WORKER_HEADER.lower()])
            if answered == workers:
                break
        assert answered == workers, "a worker never answered"
        print(f"\nboth workers refused a third upload within {tries} tries")
        for client in reading:
            client.close()  # their reads are stopped, their places given back
        wait_until(lambda: held() == 0, message="the places were not given back")
