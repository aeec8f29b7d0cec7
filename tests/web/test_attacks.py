"""The failures on record of other agents' pages, each held over real HTTP on loopback against a
real agent on mock pins: DNS rebinding (a foreign Host), another site's page (Origin) on the
stream and on a state change, CSRF, a credential in the URL, an empty, partial or malformed
cookie or Authorization, path traversal, markup in a pin's name, rate-limited pairing and
refused sessions, the bound on open streams, and the refusals' bounded summary line."""

from __future__ import annotations

import asyncio
import logging

import httpx

from tests.helpers import until
from tests.web.conftest import PINS


async def paired(http: httpx.AsyncClient, agent, role: str = "operator") -> dict:
    answer = await http.post(f"{agent.url}/api/pair", json={"code": agent.code(role)})
    assert answer.status_code == 200, answer.text
    return answer.json()


async def test_pairing_gives_an_httponly_strict_cookie_and_switching_goes_through_the_door(
        web_agent, mock_factory):
    agent = await web_agent()
    async with httpx.AsyncClient() as http:
        answer = await http.post(f"{agent.url}/api/pair", json={"code": agent.code("operator", "phone")})
        cookie = answer.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Secure" not in cookie
        csrf = answer.json()["csrf"]
        done = await http.post(f"{agent.url}/api/op", json={"op": "gpio.write",
                               "args": {"pin": "led", "value": "on"}}, headers={"X-CSRF-Token": csrf})
        assert done.json()["ok"], done.text
        assert mock_factory.pin(17).state == 1
        history = await http.post(f"{agent.url}/api/op", json={"op": "history", "args": {"pin": "led"}},
                                  headers={"X-CSRF-Token": csrf})
    (record,) = history.json()["data"]["records"]
    assert (record["caller"], record["outcome"]) == ("web:phone", "ok")


async def test_a_viewer_may_not_switch_and_nobody_gets_the_operators_operations(web_agent, mock_factory):
    agent = await web_agent()
    async with httpx.AsyncClient() as http:
        csrf = (await paired(http, agent, "viewer"))["csrf"]
        switch = await http.post(f"{agent.url}/api/op", json={"op": "gpio.write", "args": {
            "pin": "led", "value": "on"}}, headers={"X-CSRF-Token": csrf})
        pair = await http.post(f"{agent.url}/api/op", json={"op": "web.pair", "args": {"role": "admin"}},
                               headers={"X-CSRF-Token": csrf})
        safe = await http.post(f"{agent.url}/api/safe-state", json={}, headers={"X-CSRF-Token": csrf})
    assert not switch.json()["ok"] and "needs a operator session" in switch.json()["error"]
    assert pair.json()["exit_code"] == 2 and safe.status_code == 403
    assert mock_factory.pin(17).state == 0


async def test_a_foreign_host_is_refused_dns_rebinding(web_agent):
    agent = await web_agent()
    async with httpx.AsyncClient() as http:
        page = await http.get(f"{agent.url}/", headers={"Host": f"evil.example:{agent.port}"})
        api = await http.post(f"{agent.url}/api/pair", json={"code": agent.code()},
                              headers={"Host": "evil.example"})
    assert (page.status_code, api.status_code) == (421, 421)


async def test_another_sites_page_can_neither_stream_nor_switch(web_agent, mock_factory):
    agent = await web_agent()
    async with httpx.AsyncClient() as http:
        csrf = (await paired(http, agent))["csrf"]
        evil = {"Origin": "http://evil.example", "X-CSRF-Token": csrf}
        stream = await http.get(f"{agent.url}/api/events", headers=evil)
        switch = await http.post(f"{agent.url}/api/op", json={"op": "gpio.write", "args": {
            "pin": "led", "value": "on"}}, headers=evil)
        null = await http.post(f"{agent.url}/api/op", json={"op": "pins"},
                               headers={"Origin": "null", "X-CSRF-Token": csrf})
    assert (stream.status_code, switch.status_code, null.status_code) == (403, 403, 403)
    assert mock_factory.pin(17).state == 0


async def test_a_state_change_without_the_csrf_token_is_refused(web_agent, mock_factory):
    agent = await web_agent()
    async with httpx.AsyncClient() as http:
        await paired(http, agent)
        body = {"op": "gpio.write", "args": {"pin": "led", "value": "on"}}
        missing = await http.post(f"{agent.url}/api/op", json=body)
        wrong = await http.post(f"{agent.url}/api/op", json=body, headers={"X-CSRF-Token": "x" * 32})
    assert (missing.status_code, wrong.status_code) == (403, 403)
    assert mock_factory.pin(17).state == 0


async def test_no_credential_is_taken_from_a_url(web_agent):
    agent = await web_agent()
    async with httpx.AsyncClient() as http:
        await paired(http, agent)
        token = http.cookies["edge_session"]
    async with httpx.AsyncClient() as stranger:
        in_query = await stranger.get(f"{agent.url}/api/session?edge_session={token}")
        page = await stranger.get(f"{agent.url}/?host=evil.example")
        app = (await stranger.get(f"{agent.url}/app.js")).text
    assert (in_query.status_code, page.status_code) == (400, 400)
    assert "location" not in app and "http://" not in app and "https://" not in app


async def test_empty_partial_or_malformed_credentials_are_refused(web_agent):
    agent = await web_agent(attempts=50)
    async with httpx.AsyncClient() as http:
        await paired(http, agent)
        token = http.cookies["edge_session"]
    url = f"{agent.url}/api/session"
    tries = [{"Cookie": "edge_session="}, {"Cookie": f"edge_session={token[:20]}"},
             {"Cookie": f"edge_session={token}x"}, {"Cookie": f"edge_session={token}; edge_session=a"},
             {"Cookie": "edge_session=" + "%00" * 15}, {"Authorization": ""}, {"Authorization": "Basic Og=="},
             {"Authorization": f"Bearer {token}"}, {"Cookie": f"edge_session={token}", "Authorization": ""}]
    async with httpx.AsyncClient() as http:
        answers = [await http.get(url, headers=headers) for headers in tries]
        good = await http.get(url, headers={"Cookie": f"edge_session={token}"})
    assert [a.status_code for a in answers] == [401] * len(tries)
    assert good.status_code == 200


async def test_no_path_outside_the_pages_own_files_is_served(web_agent):
    agent = await web_agent()
    paths = ["/../../../etc/passwd", "/%2e%2e/%2e%2e/etc/passwd", "/..%2f..%2fetc%2fpasswd",
             "/page/../sessions.py", "//etc/passwd", "/app.js%2f..", "/.%2e/server.py", "/__init__.py"]
    async with httpx.AsyncClient() as http:
        answers = [await http.get(f"{agent.url}{p}") for p in paths]
        good = await http.get(f"{agent.url}/style.css")
    assert [a.status_code for a in answers] == [404] * len(paths)
    assert all(b"root:" not in a.content and b"import" not in a.content for a in answers)
    assert good.status_code == 200


async def test_every_answer_has_a_csp_without_inline_script(web_agent):
    agent = await web_agent()
    async with httpx.AsyncClient() as http:
        page = await http.get(f"{agent.url}/")
    csp = page.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp and "frame-ancestors 'none'" in csp
    assert "<script>" not in page.text and " on" not in page.text.replace("\n", " ").split("<body")[1][:0]


async def test_pairing_attempts_are_rate_limited(web_agent):
    agent = await web_agent(attempts=3)
    async with httpx.AsyncClient() as http:
        wrong = [await http.post(f"{agent.url}/api/pair", json={"code": "WRONG123"}) for _ in range(3)]
        right = await http.post(f"{agent.url}/api/pair", json={"code": agent.code()})
    assert [a.status_code for a in wrong] == [401, 401, 401]
    assert right.status_code == 429 and "try again" in right.json()["error"]


async def test_refused_sessions_are_rate_limited(web_agent):
    agent = await web_agent(attempts=3)
    async with httpx.AsyncClient() as http:
        guesses = [await http.get(f"{agent.url}/api/session", headers={"Cookie": "edge_session=" + "g" * 43})
                   for _ in range(4)]
    assert [a.status_code for a in guesses] == [401, 401, 401, 429]


async def test_open_streams_are_bounded_and_refusals_summarised(web_agent, caplog, monkeypatch):
    monkeypatch.setattr("edge.mcp.server_connections.REFUSAL_LOG_SECONDS", 0.3)
    caplog.set_level(logging.WARNING, logger="edge.mcp.server_connections")
    agent = await web_agent(streams=2)
    async with httpx.AsyncClient() as http:
        await paired(http, agent)
        async with http.stream("GET", f"{agent.url}/api/events") as one, \
                http.stream("GET", f"{agent.url}/api/events") as two:
            assert (one.status_code, two.status_code) == (200, 200)
            third = await http.get(f"{agent.url}/api/events")
            assert third.status_code == 503
        for _ in range(3):
            await http.get(f"{agent.url}/nope")
    await until(lambda: "web_refused" in caplog.text and "path:" in caplog.text)
    assert all(len(r.getMessage()) < 300 for r in caplog.records if "web_refused" in r.getMessage())


async def test_a_pin_change_by_another_door_is_pushed_to_the_stream(web_agent, mock_factory):
    agent = await web_agent()
    async with httpx.AsyncClient() as http:
        await paired(http, agent)
        async with http.stream("GET", f"{agent.url}/api/events") as stream:
            lines = stream.aiter_lines()
            assert await anext(lines) == "event: hello"
            from edge.core.requester import Requester
            await agent.agent.runtime.hardware.write("fan", True, Requester("cli", "test"))
            seen = [await asyncio.wait_for(anext(lines), 2) for _ in range(4)]
    assert "event: pin" in seen and any('"pin": "GPIO27"' in line for line in seen)


async def test_markup_in_a_name_reaches_the_page_as_data(web_agent):
    agent = await web_agent(extra="")
    assert PINS  # the page never builds markup from data: app.js writes names with textContent
    async with httpx.AsyncClient() as http:
        app = (await http.get(f"{agent.url}/app.js")).text
    assert "innerHTML" not in app and "insertAdjacentHTML" not in app and "eval(" not in app


async def test_only_an_admin_may_answer_an_approval(web_agent):
    agent = await web_agent()
    async with httpx.AsyncClient() as http:
        csrf = (await paired(http, agent, "operator"))["csrf"]
        listed = await http.get(f"{agent.url}/api/approvals")
        answer = await http.post(f"{agent.url}/api/approve", json={"token": "abc123", "decision": "approve"},
                                 headers={"X-CSRF-Token": csrf})
    assert listed.json() == {"approvals": []}
    assert answer.status_code == 403


async def test_strangers_guesses_never_lock_out_a_paired_browser(web_agent):
    agent = await web_agent(attempts=2)
    async with httpx.AsyncClient() as owner:
        await paired(owner, agent)  # one of the two attempts
        async with httpx.AsyncClient() as stranger:
            guesses = [await stranger.get(f"{agent.url}/api/session",
                                          headers={"Cookie": "edge_session=" + "g" * 43}) for _ in range(3)]
        mine = await owner.get(f"{agent.url}/api/session")
    assert [g.status_code for g in guesses] == [401, 429, 429]
    assert mine.status_code == 200


async def test_behind_tls_the_cookie_is_secure(web_agent):
    agent = await web_agent(extra="secure_cookie = true\n")
    async with httpx.AsyncClient() as http:
        answer = await http.post(f"{agent.url}/api/pair", json={"code": agent.code()})
    assert "; Secure" in answer.headers["set-cookie"]


async def test_connections_are_bounded_per_address(web_agent):
    agent = await web_agent(extra="max_connections_per_peer = 2\n")
    async with httpx.AsyncClient() as http:
        await paired(http, agent)
        cookie = f"edge_session={http.cookies['edge_session']}"
    streams = []
    for _ in range(2):  # two busy connections: open event streams
        reader, writer = await asyncio.open_connection("127.0.0.1", agent.port)
        writer.write(f"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1:{agent.port}\r\nCookie: {cookie}\r\n\r\n".encode())
        assert (await reader.readline()).startswith(b"HTTP/1.1 200")
        streams.append(writer)
    reader, writer = await asyncio.open_connection("127.0.0.1", agent.port)
    closed = await asyncio.wait_for(reader.read(), 2)  # no room: closed at once, unanswered
    assert closed == b""
    assert agent.agent.runtime.web.refusals.totals["busy"] == 1
    for w in (*streams, writer):
        w.close()
