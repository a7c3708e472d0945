"""A page as headless Chromium shows it: the DOM after its scripts ran, what it said on
the console, what it asked the network for, how long it took to load and paint, and a
screenshot kept as a CI artifact (issue 44: the HTML report is checked in a browser).

Chromium (Debian's ``chromium``) is driven over the DevTools protocol on a pipe
(``--remote-debugging-pipe``: JSON messages ended by a NUL byte, the browser reading
fd 3 and writing fd 4), as Puppeteer does: no port to pick, no websocket client to
add, and every event (an uncaught exception, a ``console.error``, a failed load)
arrives as data rather than as log lines to parse. Each page is opened by a browser of
its own, in a profile of its own, so tests run in parallel and leave nothing behind.

Without chromium the test is skipped, and fails under ``CLONEGATE_REQUIRE_ALL_SERVERS``,
as for the other server programs (``server_programs.py``). Every wait is for an event;
one generous bound per page is a safety net on a loaded machine, never the assertion.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import json
import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trio

from .server_programs import server_program

ROOT = Path(__file__).resolve().parents[2]
# Where screenshots go: ``.ci/run`` sets it; by default the same, gitignored, directory.
ARTIFACTS_VARIABLE = "CLONEGATE_ARTIFACTS"
PAGE_BOUND = 120  # seconds for one page, start to close: a safety net only
# Where a page may fetch from and still be "self-contained".
LOCAL_SCHEMES = ("file:", "data:", "about:", "blob:")
# The browser's own background traffic off, the network unreachable (a page that reaches
# for it shows as a failed request, named in ``Page.requests``), colours as in sRGB.
_FLAGS = (
    "--headless=new",
    "--remote-debugging-pipe",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-extensions",
    "--disable-sync",
    "--mute-audio",
    "--hide-scrollbars",
    "--force-color-profile=srgb",
    "--host-resolver-rules=MAP * ~NOTFOUND",
)
# The first paint, as the page's performance timeline reports it: after the frame was
# presented, so later than any animation frame (a page that never paints is never done).
_PAINTED = """new Promise(done => new PerformanceObserver((found, observer) => {
  if (found.getEntriesByName("first-paint").length) { observer.disconnect(); done(); }
}).observe({type: "paint", buffered: true}))"""
_TRAMPOLINE = (
    "import os, sys; os.dup2({0}, 3); os.dup2({1}, 4); os.close({0}); os.close({1}); "
    "os.execv(sys.argv[1], sys.argv[1:])"
)
_TIMING = """JSON.stringify({
  navigation: performance.getEntriesByType("navigation")[0]?.toJSON() ?? null,
  paint: performance.getEntriesByType("paint").map(entry => entry.toJSON()),
})"""


def artifacts() -> Path:
    """The directory screenshots are kept in (created)."""
    path = Path(os.environ.get(ARTIFACTS_VARIABLE) or ROOT / ".ci" / "artifacts")
    path.mkdir(parents=True, exist_ok=True)
    return path


def chromium() -> str:
    """Chromium's path; skips the test without it (fails it in CI)."""
    return server_program("chromium")


@dataclass(frozen=True)
class Message:
    """One thing the page said: ``console.*``, an uncaught exception, a browser log entry
    (a resource that failed to load, a blocked script)."""

    level: str  # "error", "warning", "info", "log", "debug"
    text: str
    source: str  # "console", "exception" or the log entry's source ("network", ...)


@dataclass(frozen=True)
class Timing:
    """Milliseconds from the start of navigation, as the page's ``performance`` saw them."""

    load_event_end: float
    first_paint: float | None  # None: the browser reported no paint
    first_contentful_paint: float | None

    @property
    def opened(self) -> float:
        """Until the page was loaded and painted: what a person waits for."""
        painted = [t for t in (self.first_paint, self.first_contentful_paint) if t is not None]
        return max([self.load_event_end, *painted])


@dataclass(frozen=True)
class Page:
    """A page after it loaded and painted."""

    url: str
    dom: str  # ``document.documentElement.outerHTML`` once scripts ran
    messages: tuple[Message, ...]
    requests: tuple[str, ...]  # every URL the page asked for, its own included
    timing: Timing
    values: tuple[Any, ...]  # what each of ``evaluate``'s expressions gave, in order
    screenshot: Path | None

    @property
    def errors(self) -> list[Message]:
        """What a person would call an error on the console."""
        return [message for message in self.messages if message.level == "error"]

    @property
    def external_requests(self) -> list[str]:
        """What the page asked of anything but itself: must be empty for a report."""
        return [url for url in self.requests if not url.startswith(LOCAL_SCHEMES)]


async def open_page(
    path: Path,
    *,
    evaluate: Sequence[str] = (),
    screenshot: str | None = None,
    size: tuple[int, int] = (1280, 800),
    full_page: bool = False,
) -> Page:
    """Open ``path`` (a file) in headless Chromium at ``size`` (CSS pixels), wait for its
    load event and first paint, then evaluate each of ``evaluate``'s JavaScript
    expressions (a promise is awaited; the value must be JSON) and, with ``screenshot``,
    save a PNG of that name under :func:`artifacts` (``full_page``: all of it, not only
    the window). Raises ``AssertionError`` if the page cannot be loaded."""
    program = chromium()
    with trio.fail_after(PAGE_BOUND), tempfile.TemporaryDirectory() as profile:
        async with _Browser(program, Path(profile)) as tools:
            return await _visit(
                tools, path.resolve().as_uri(), evaluate, screenshot, size, full_page
            )


async def _visit(
    tools: _DevTools,
    url: str,
    evaluate: Sequence[str],
    screenshot: str | None,
    size: tuple[int, int],
    full_page: bool,
) -> Page:
    target = await tools.call("Target.createTarget", url="about:blank")
    attached = await tools.call("Target.attachToTarget", targetId=target["targetId"], flatten=True)
    tools.session = attached["sessionId"]
    for domain in ("Page", "Runtime", "Log", "Network"):
        await tools.call(f"{domain}.enable")
    width, height = size
    await tools.call(
        "Emulation.setDeviceMetricsOverride",
        width=width,
        height=height,
        deviceScaleFactor=1,
        mobile=False,
    )
    navigated = await tools.call("Page.navigate", url=url)
    if "errorText" in navigated:
        raise AssertionError(f"chromium could not open {url}: {navigated['errorText']}")
    await tools.event("Page.loadEventFired")
    await tools.evaluate(_PAINTED)
    timing = _timing(json.loads(await tools.evaluate(_TIMING)))
    dom = await tools.evaluate("document.documentElement.outerHTML")
    values = tuple([await tools.evaluate(expression) for expression in evaluate])
    saved = None
    if screenshot is not None:
        saved = artifacts() / screenshot
        saved.write_bytes(await _screenshot(tools, full_page))
    return Page(url, dom, tools.messages(), tools.requests(), timing, values, saved)


async def _screenshot(tools: _DevTools, full_page: bool) -> bytes:
    options: dict[str, Any] = {"format": "png"}
    if full_page:
        content = (await tools.call("Page.getLayoutMetrics"))["cssContentSize"]
        clip = {k: content[k] for k in ("x", "y", "width", "height")}
        options.update(captureBeyondViewport=True, clip={**clip, "scale": 1})
    shot = await tools.call("Page.captureScreenshot", **options)
    return base64.b64decode(shot["data"])


def _timing(found: dict[str, Any]) -> Timing:
    navigation = found["navigation"]
    if navigation is None:
        raise AssertionError("the page has no navigation timing")
    paints = {entry["name"]: entry["startTime"] for entry in found["paint"]}
    return Timing(
        load_event_end=navigation["loadEventEnd"],
        first_paint=paints.get("first-paint"),
        first_contentful_paint=paints.get("first-contentful-paint"),
    )


class _DevTools:
    """The DevTools protocol on the browser's pipe: commands in order, one at a time,
    every event kept as it arrives (read while waiting for an answer)."""

    def __init__(
        self, commands: trio.lowlevel.FdStream, answers: trio.lowlevel.FdStream, log: Path
    ) -> None:
        self._commands = commands
        self._log = log  # what chromium wrote on stderr: why it went away
        self._answers = answers
        self._buffer = b""
        self._last_id = 0
        self.session: str | None = None  # the page's, once attached
        self.events: list[dict[str, Any]] = []

    async def call(self, method: str, **params: Any) -> dict[str, Any]:
        """Send one command, return its result; raise ``AssertionError`` on an error."""
        await self.send(method, **params)
        while True:
            message = await self._receive()
            if message.get("id") != self._last_id:
                self.events.append(message)
            elif "error" in message:
                raise AssertionError(f"chromium: {method}: {message['error']}")
            else:
                result: dict[str, Any] = message["result"]
                return result

    async def send(self, method: str, **params: Any) -> None:
        """Send one command; its answer is read by the next :meth:`call`."""
        self._last_id += 1
        command: dict[str, Any] = {"id": self._last_id, "method": method, "params": params}
        if self.session is not None and not method.startswith(("Target.", "Browser.")):
            command["sessionId"] = self.session
        await self._commands.send_all(json.dumps(command).encode() + b"\0")

    async def event(self, method: str) -> dict[str, Any]:
        """The first event named ``method``, received already or to come."""
        checked = 0
        while True:
            for message in self.events[checked:]:
                if message.get("method") == method:
                    params: dict[str, Any] = message["params"]
                    return params
            checked = len(self.events)
            self.events.append(await self._receive())

    async def evaluate(self, expression: str) -> Any:
        """The JSON value of ``expression`` in the page (a promise awaited); an exception
        it throws is an ``AssertionError``, not a message of the page's."""
        found = await self.call(
            "Runtime.evaluate", expression=expression, awaitPromise=True, returnByValue=True
        )
        if "exceptionDetails" in found:
            raise AssertionError(f"{expression!r} threw: {found['exceptionDetails']}")
        return found["result"].get("value")

    def messages(self) -> tuple[Message, ...]:
        found = (_message(event) for event in self.events)
        return tuple(message for message in found if message is not None)

    def requests(self) -> tuple[str, ...]:
        return tuple(
            event["params"]["request"]["url"]
            for event in self.events
            if event.get("method") == "Network.requestWillBeSent"
        )

    async def _receive(self) -> dict[str, Any]:
        while b"\0" not in self._buffer:
            chunk = await self._answers.receive_some(1 << 20)
            if not chunk:
                said = self._log.read_text(errors="replace").splitlines()[-5:]
                raise AssertionError("chromium closed its DevTools pipe:\n" + "\n".join(said))
            self._buffer += chunk
        message, _, self._buffer = self._buffer.partition(b"\0")
        found: dict[str, Any] = json.loads(message)
        return found


def _message(event: dict[str, Any]) -> Message | None:
    """The page's message in a DevTools event, if it is one."""
    method, params = event.get("method"), event.get("params", {})
    if method == "Runtime.consoleAPICalled":
        text = " ".join(str(arg.get("value", arg.get("description", ""))) for arg in params["args"])
        level = {"assert": "error", "warning": "warning"}.get(params["type"], params["type"])
        return Message(level, text, "console")
    if method == "Runtime.exceptionThrown":
        details = params["exceptionDetails"]
        text = details.get("exception", {}).get("description") or details["text"]
        return Message("error", text, "exception")
    if method == "Log.entryAdded":
        entry = params["entry"]
        return Message(entry["level"], entry["text"], entry["source"])
    return None


class _Browser:
    """Chromium started with its DevTools pipe on fds 3 and 4, closed (its process group
    killed if it does not close within a bound) when the block ends, however it ends."""

    def __init__(self, program: str, profile: Path) -> None:
        self._program = program
        self._profile = profile
        self._process: trio.Process | None = None
        self._streams: list[trio.lowlevel.FdStream] = []
        self._tools: _DevTools | None = None

    async def __aenter__(self) -> _DevTools:
        # The pipes' far ends are put on fds 3 and 4 by a small Python trampoline:
        # subprocess can only keep a descriptor's number, a preexec_fn is not safe beside
        # threads, and dash redirects no descriptor above 9.
        commands_read, commands_write = _pipe_above_ten()
        answers_read, answers_write = _pipe_above_ten()
        flags = [*_FLAGS, f"--user-data-dir={self._profile / 'profile'}"]
        if os.geteuid() == 0:  # CI runs as root, where chromium refuses its sandbox
            flags.append("--no-sandbox")
        trampoline = _TRAMPOLINE.format(commands_read, answers_write)
        try:
            with (self._profile / "chromium.log").open("wb") as log:
                self._process = await trio.lowlevel.open_process(
                    [sys.executable, "-c", trampoline, self._program, *flags, "about:blank"],
                    pass_fds=(commands_read, answers_write),
                    stdin=subprocess.DEVNULL,
                    stdout=log,
                    stderr=log,
                    start_new_session=True,  # its zygote and renderers: one group to end
                )
        except BaseException:
            os.close(commands_write)
            os.close(answers_read)
            raise
        finally:  # the browser's ends are the browser's alone
            os.close(commands_read)
            os.close(answers_write)
        commands, answers = map(trio.lowlevel.FdStream, (commands_write, answers_read))
        self._streams = [commands, answers]
        self._tools = _DevTools(commands, answers, self._profile / "chromium.log")
        return self._tools

    async def __aexit__(self, *exc_info: object) -> None:
        process = self._process
        assert process is not None
        with trio.CancelScope(shield=True):
            with trio.move_on_after(10):  # the shield's bound
                await self._close(process)
            # Whatever of its group is left (all of it, if it did not close in time).
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            await process.wait()
            for stream in self._streams:
                await stream.aclose()

    async def _close(self, process: trio.Process) -> None:
        """Ask the browser to close (it ends its renderers first), then wait for it."""
        if self._tools is not None and process.returncode is None:
            with contextlib.suppress(trio.BrokenResourceError, trio.ClosedResourceError):
                await self._tools.send("Browser.close")
        await process.wait()


def _pipe_above_ten() -> tuple[int, int]:
    """A pipe whose ends are not 3 or 4 (which the browser's must become)."""
    read, write = os.pipe()
    ends = tuple(_above_ten(fd) for fd in (read, write))
    return ends[0], ends[1]


def _above_ten(fd: int) -> int:
    moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return moved
