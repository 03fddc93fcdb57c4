"""Headless Debian Chromium driven by selenium against the app on loopback servers."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from demo_data.generator import seed_finance
from models.db import Database
from tests.browser.page import ChatPage
from tests.conftest import make_user
from tests.live import LiveServer

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
SCREENSHOTS = Path(__file__).parent / "screenshots"
# The network is closed: without these Chromium's background fetches fail and hold things up.
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--window-size=1280,1000",
]


def _have_browser() -> bool:
    return all(Path(p).exists() for p in (CHROMIUM, CHROMEDRIVER))


@pytest.fixture(scope="session")
def driver() -> Iterator[Any]:
    """One headless Chromium for the whole run, with a fresh profile."""
    if not _have_browser():
        if os.environ.get("REQUIRE_BROWSER"):
            pytest.fail("REQUIRE_BROWSER is set but chromium/chromium-driver are not installed")
        pytest.skip("chromium and chromium-driver are not installed (make test installs them)")
    os.environ.setdefault("SE_AVOID_STATS", "true")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    profile = tempfile.mkdtemp(prefix="chat-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in [*FLAGS, f"--user-data-dir={profile}"]:
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    browser = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    browser.set_script_timeout(30)
    yield browser
    browser.quit()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def serve(app_config: dict[str, Any], db: Database) -> Iterator[Callable[..., LiveServer]]:
    """Start the app (settings overridden by keywords) on a loopback port, with a seeded user."""
    from app import create_app

    started: list[LiveServer] = []
    user_id, token = make_user(db, "browser")
    seed_finance(db, user_id, months=3, seed=5)

    def start(**config: Any) -> LiveServer:
        server = LiveServer(create_app({**app_config, **config}), token)
        started.append(server)
        return server

    yield start
    for server in started:
        server.close()
        server.app.extensions["engine"].close()
        server.app.extensions["db"].dispose()


@pytest.fixture
def page(driver: Any) -> Iterator[ChatPage]:
    """The chat page helper; leaves the browser on a blank page afterwards."""
    chat = ChatPage(driver, SCREENSHOTS)
    chat.console_errors()  # drop what earlier tests logged
    yield chat
    driver.get("about:blank")  # closes the page's event streams before its server stops
    chat.reset()  # each server is a new origin: its storage starts empty
