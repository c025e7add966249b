"""Headless Chromium for browser tests: Playwright driving the system's ``chromium``.

bin/test installs Debian's ``chromium`` when it is missing; Playwright never downloads a
browser of its own (``executable_path`` points at the system one). Pages are served by the
session's live stack (tests/e2e/conftest.py), signed in through the admin's login form.
Screenshots go to ``tests/artifacts/`` (git-ignored) for a reviewer to look at.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from playwright.sync_api import Browser, ConsoleMessage, Page, Response, sync_playwright

from tests.stack import Stack

ARTIFACTS = Path(__file__).resolve().parents[2] / "artifacts"
# The flags the machine notes prescribe: no sandbox as root, and no background
# networking (the closed network refuses it, noisily, at every start).
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync", "--disable-dev-shm-usage"]



def chromium_path() -> str:
    path = os.environ.get("KIONGA_CHROMIUM") or shutil.which("chromium") \
        or shutil.which("chromium-browser")
    if not path:
        pytest.fail("no system chromium: bin/test installs Debian's chromium package")
    return path


@contextmanager
def launched_browser() -> Iterator[Browser]:
    """Chromium under Playwright, and Playwright only while the caller holds it.

    Playwright's sync API runs its event loop in the main thread (in a greenlet), and
    while it is alive that thread counts as "inside a running loop": asyncio.run()
    and Django's async_unsafe checks fail. So the loop must live only as long as the
    tests that use it (never the rest of the session), and only there may the tests'
    own synchronous ORM calls (creating users, reading runs) run beside it.
    """
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            launched = playwright.chromium.launch(executable_path=chromium_path(),
                                                  headless=True, args=CHROMIUM_ARGS)
            yield launched
            launched.close()
        # What the rest of the session needs: no loop left "running" in this thread.
        assert asyncio._get_running_loop() is None, "Playwright left its loop running"
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture(scope="package")
def browser() -> Iterator[Browser]:
    """One Chromium for the browser tests of this package (every test here is one);
    each test still gets a fresh context (tab): own cookies. A browser test elsewhere
    takes `launched_browser()` for its module: this fixture, imported there, would keep
    Playwright's loop running for that whole package."""
    with launched_browser() as launched:
        yield launched


class BrowserPage:
    """One browser tab on the stack, collecting console errors and saving screenshots."""

    def __init__(self, page: Page, stack: Stack) -> None:
        self.page = page
        self.stack = stack
        self.console_errors: list[str] = []
        page.on("console", self._console)
        page.on("pageerror", lambda error: self.console_errors.append(str(error)))
        page.on("response", self._response)

    def _console(self, message: ConsoleMessage) -> None:
        if message.type == "error":
            self.console_errors.append(message.text)

    def _response(self, response: Response) -> None:
        # The console says only "404"; name the resource so a failure is readable.
        if response.status >= 400:
            self.console_errors.append(f"{response.status} {response.url}")

    def url(self, path: str) -> str:
        return f"{self.stack.base_url}{path}"

    def goto(self, path: str) -> None:
        response = self.page.goto(self.url(path))
        assert response is not None and response.status < 400, (path, response and response.status)

    def sign_in(self, username: str, password: str, next_path: str = "/admin/",
                login_path: str = "/admin/login/") -> None:
        """Sign in through a login form (the Django session every UI shares): the admin's
        (ops staff only) or the approver UI's (``login_path="/approvals/sign-in/"``)."""
        self.page.goto(self.url(f"{login_path}?next={next_path}"))
        self.page.get_by_label("Username").fill(username)
        self.page.get_by_label("Password").fill(password)
        self.page.get_by_role("button", name=re.compile(r"^(Log in|Sign in)$")).click()
        self.page.wait_for_load_state()

    def screenshot(self, name: str) -> Path:
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        path = ARTIFACTS / f"{name}.png"
        self.page.screenshot(path=str(path), full_page=True)
        return path


@pytest.fixture
def tab(browser: Browser, stack: Stack) -> Iterator[BrowserPage]:
    """A fresh browser context (own cookies) at the desktop size the product targets."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    context.set_default_timeout(15_000)
    yield BrowserPage(context.new_page(), stack)
    context.close()


@pytest.fixture
def phone_tab(browser: Browser, stack: Stack) -> Iterator[BrowserPage]:
    """A phone-width tab (390×844, touch) for the pages people use on the move."""
    context = browser.new_context(viewport={"width": 390, "height": 844}, has_touch=True,
                                  is_mobile=True)
    context.set_default_timeout(15_000)
    yield BrowserPage(context.new_page(), stack)
    context.close()


@pytest.fixture
def tablet_tab(browser: Browser, stack: Stack) -> Iterator[BrowserPage]:
    """A tablet (1024×768, touch) for the canvas, which must stay usable there."""
    context = browser.new_context(viewport={"width": 1024, "height": 768}, has_touch=True)
    context.set_default_timeout(15_000)
    yield BrowserPage(context.new_page(), stack)
    context.close()
