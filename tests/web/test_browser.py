"""The page in a real browser: Debian's Chromium (/usr/bin/chromium, deploy/test-packages.txt)
driven by Playwright, against a real agent on mock pins. Pair, see the pins, switch the led and
see it on, watch a change made by `edge-cli` (the control socket) appear, open a chart, filter
the history, press "safe state"; on a desktop and on a phone-sized viewport. A page from another
origin tries to switch a pin and cannot. Screenshots of each step go to the test's tmp_path
(and the desktop's pin map to docs/web-pins.png when WEB_PINS_SCREENSHOT is set)."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from threading import Thread

import pytest
from playwright.async_api import async_playwright, expect

from edge.core.requester import Requester
from tests.helpers import ROOT, cli
from tests.mcp.http_agent import free_port

CHROMIUM = "/usr/bin/chromium"
PI_SENSOR = """
[sensors.pi]
type = "pi"
interval_seconds = 0.2
[[interlocks]]
name = "supply"
at_most = 2
of = ["led", "fan"]
"""
VIEWPORTS = {"desktop": {"width": 1280, "height": 800}, "phone": {"width": 390, "height": 844}}


@pytest.fixture
async def browser():
    async with async_playwright() as playwright:
        launched = await playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield launched
        await launched.close()


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
async def test_pair_switch_watch_chart_history_and_safe_state(viewport, web_agent, browser, mock_factory,
                                                              tmp_path, isolated_env):
    agent = await web_agent(extra=PI_SENSOR)
    shots = tmp_path / "screenshots"
    shots.mkdir()
    page = await browser.new_page(viewport=VIEWPORTS[viewport])
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))

    async def shot(step: str) -> None:
        await page.screenshot(path=str(shots / f"{viewport}-{step}.png"), full_page=True)

    await page.goto(agent.url + "/")
    await expect(page.locator("#pair")).to_be_visible()
    # nothing but the pairing form before pairing: a tab clicked then was undone by the answer
    await expect(page.locator("#tabs")).to_be_hidden()
    await shot("1-pairing")
    await page.fill("#code", agent.code("admin", f"{viewport}"))
    await page.press("#code", "Enter")  # usable without a mouse
    led = page.locator('article[data-pin="led"]')
    await expect(led.locator(".state")).to_have_text("off")
    await expect(page.locator("#live")).to_have_text("live")
    await shot("2-pins")

    await led.get_by_role("button", name="Switch on").click()
    await expect(led.locator(".state")).to_have_text("on")
    assert mock_factory.pin(17).state == 1
    await expect(led.locator("[data-last]")).to_contain_text(f"write by web:{viewport} (ok, read back on)")
    await expect(led.locator("[data-auto-off]")).to_contain_text("auto-off in")
    await expect(led.locator('[data-interlock="supply"]')).to_contain_text("interlock supply")
    await shot("3-led-on")
    if viewport == "desktop" and os.environ.get("WEB_PINS_SCREENSHOT"):
        shutil.copy(shots / "desktop-3-led-on.png", ROOT / "docs" / "web-pins.png")

    env = {**isolated_env, "EDGE_CONFIG": str(tmp_path / "config.toml")}
    done = await asyncio.to_thread(cli, "gpio", "write", "fan", "on", env=env)
    assert done.returncode == 0, done.stderr
    await expect(page.locator('article[data-pin="fan"] .state')).to_have_text("on", timeout=2000)
    await shot("4-fan-by-edge-cli")

    await page.get_by_role("button", name="Sensors").click()
    await page.get_by_role("button", name="Chart pi memory_used").click()
    await expect(page.locator("#chart-title")).to_contain_text("pi memory_used (%)")
    await expect(page.locator("#chart")).to_have_attribute("data-points", re.compile(r"^[1-9]"))
    await shot("5-chart")
    await page.get_by_role("button", name="History").click()
    await page.fill("#h-pin", "fan")
    await page.get_by_role("button", name="Filter").click()
    rows = page.locator("#history-rows tr")
    await expect(rows).to_have_count(1)
    await expect(rows.first).to_contain_text("local:")
    await shot("6-history-fan")

    await page.get_by_role("button", name="Health").click()
    await expect(page.locator("#status-text")).not_to_be_empty()
    page.once("dialog", lambda dialog: asyncio.ensure_future(dialog.accept()))
    await page.get_by_role("button", name="Safe state now").click()
    await expect(page.locator("#safe-result")).to_contain_text("2 of 2 outputs at their safe level")
    assert (mock_factory.pin(17).state, mock_factory.pin(27).state) == (0, 0)
    await shot("7-safe-state")
    assert errors == []


MARKUP = "<img src=x onerror=\"document.title='pwned'\">"
"""Markup in what a page shows (here the approval's "why", which a chat message sets)."""


class ModelChat:
    """A chat channel that can ask for approvals (the prompt goes nowhere: the page answers)."""

    supports_approvals = True

    async def request_approval(self, ctx, prompt: str, token: str) -> None:
        pass

    async def approval_expired(self, ctx, token: str) -> None:
        pass


async def test_an_admin_approves_a_models_actuation_on_the_page(web_agent, browser, mock_factory, tmp_path):
    agent = await web_agent()
    runtime = agent.agent.runtime
    runtime.approvals.autonomy = "supervised"
    runtime.approvals.approvers = {"chat": ModelChat()}
    page = await browser.new_page(viewport=VIEWPORTS["phone"])
    await page.goto(agent.url + "/")
    await page.fill("#code", agent.code("admin", "owner"))
    await page.press("#code", "Enter")
    await expect(page.locator('article[data-pin="led"] .state')).to_have_text("off")
    asked = asyncio.ensure_future(runtime.hardware.write(
        "led", True, Requester("chat", "42", via_model=True, why=MARKUP)))
    await expect(page.locator("#approval-count")).to_have_text("(1)")  # pushed, not polled
    await page.get_by_role("button", name="Approvals").click()
    card = page.locator("article[data-approval]")
    await expect(card).to_contain_text("switch")
    await expect(card).to_contain_text("chat:42")
    await expect(card).to_contain_text(MARKUP)  # shown as the text it is, never run
    assert await page.title() == "edge-agent" and await page.locator("img").count() == 0
    await page.screenshot(path=str(tmp_path / "approval.png"), full_page=True)
    await card.get_by_role("button", name="Approve").click()
    await asyncio.wait_for(asked, 5)
    assert mock_factory.pin(17).state == 1
    await page.get_by_role("button", name="Pins").click()
    await expect(page.locator('article[data-pin="led"] .state')).to_have_text("on")
    await expect(page.locator('article[data-pin="led"] [data-last]')).to_contain_text("chat:42")


async def test_chat_goes_through_the_agents_pipeline(web_agent, browser, mock_factory, tmp_path):
    agent = await web_agent()
    page = await browser.new_page(viewport=VIEWPORTS["desktop"])
    await page.goto(agent.url + "/")
    await page.fill("#code", agent.code("operator", "kitchen"))
    await page.press("#code", "Enter")
    await page.get_by_role("button", name="Chat").click()
    await page.fill("#chat-text", "/gpio fan on")
    await page.press("#chat-text", "Enter")
    log = page.locator("#chat-log")
    await expect(log).to_contain_text("you: /gpio fan on")
    await expect(log.locator("li.agent")).to_contain_text("on", timeout=5000)
    assert mock_factory.pin(27).state == 1
    await page.fill("#chat-text", "/pins")
    await page.press("#chat-text", "Enter")
    await expect(log.locator("li.agent").last).to_contain_text("GPIO17")
    await page.screenshot(path=str(tmp_path / "chat.png"), full_page=True)
    history = await agent.agent.runtime.tools["history"].execute({"pin": "fan"}, Requester("cli", "t"))
    assert "web:kitchen" in history.output


async def test_markup_in_a_pin_alias_is_shown_as_text(web_agent, browser, mock_factory):
    alias = MARKUP.replace('"', "'")
    agent = await web_agent(more_aliases=f'"{alias}" = "GPIO22"',
                            more_pins=f'"{alias}" = {{ mode = "output" }}')
    page = await browser.new_page()
    dialogs: list[str] = []
    page.on("dialog", lambda dialog: dialogs.append(dialog.message))
    await page.goto(agent.url + "/")
    await page.fill("#code", agent.code("operator"))
    await page.press("#code", "Enter")
    card = page.locator("article.card", has_text="GPIO22")
    await expect(card.locator("h3")).to_have_text(alias)
    await card.get_by_role("button", name="Switch on").click()
    await expect(card.locator(".state")).to_have_text("on")
    assert mock_factory.pin(22).state == 1
    assert await page.title() == "edge-agent" and await page.locator("img").count() == 0 and dialogs == []


async def test_a_pwm_slider_and_the_keyboard_alone(web_agent, browser, mock_factory):
    agent = await web_agent(more_aliases='dimmer = "GPIO18"', more_pins='dimmer = { mode = "pwm" }')
    page = await browser.new_page(viewport=VIEWPORTS["phone"])
    await page.goto(agent.url + "/")
    await expect(page.locator("#code")).to_be_focused()  # the page's script gives it the focus
    await page.keyboard.type(agent.code("operator"))
    await page.keyboard.press("Enter")
    fan = page.locator('article[data-pin="fan"]')
    await expect(fan.locator(".state")).to_have_text("off")
    await fan.get_by_role("button", name="Switch on").focus()
    await page.keyboard.press("Enter")
    await expect(fan.locator(".state")).to_have_text("on")
    assert mock_factory.pin(27).state == 1
    slider = page.get_by_role("slider", name="dimmer duty")
    await slider.fill("0.5")
    await expect(page.locator('article[data-pin="dimmer"] .state')).to_contain_text("50")
    assert abs(mock_factory.pin(18).state - 0.5) < 0.01


class EvilPage(BaseHTTPRequestHandler):
    """Another site's page that tries to switch the led on the agent it names."""

    target = ""

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        body = f"""<!doctype html><title>evil</title><script>
fetch("{self.target}/api/op", {{method: "POST", credentials: "include", mode: "no-cors",
  headers: {{"Content-Type": "text/plain"}},
  body: JSON.stringify({{op: "gpio.write", args: {{pin: "led", value: "on"}}}})}})
  .then(() => document.title = "sent", () => document.title = "failed");
</script>""".encode()
        self.send_response(200)
        self.send_header("content-type", "text/html")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


async def test_a_page_from_another_origin_cannot_switch_a_pin(web_agent, browser, mock_factory, tmp_path):
    agent = await web_agent()
    context = await browser.new_context()
    page = await context.new_page()
    await page.goto(agent.url + "/")
    await page.fill("#code", agent.code("operator"))
    await page.press("#code", "Enter")
    await expect(page.locator('article[data-pin="led"] .state')).to_have_text("off")
    EvilPage.target = agent.url
    port = free_port()
    server = ThreadingHTTPServer(("127.0.0.2", port), EvilPage)
    Thread(target=server.serve_forever, daemon=True).start()
    try:
        evil = await context.new_page()  # the same browser, holding the agent's cookie
        await evil.goto(f"http://127.0.0.2:{port}/")
        await expect(evil).to_have_title(re.compile("sent|failed"))  # CORP hides the answer
        await evil.screenshot(path=str(tmp_path / "evil-page.png"))
    finally:
        server.shutdown()
    assert agent.agent.runtime.web.refusals.totals["origin"] == 1  # it reached the agent: refused
    assert mock_factory.pin(17).state == 0
    await page.reload()
    await expect(page.locator('article[data-pin="led"] .state')).to_have_text("off")
