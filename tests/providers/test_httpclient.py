"""httpx clients: one verified TLS context per process, none for plain-HTTP endpoints."""

from __future__ import annotations

import ssl

from edge.core.httpclient import async_client, shared_tls_context


def _tls(client) -> ssl.SSLContext:
    return client._transport._pool._ssl_context


async def test_https_clients_share_one_verifying_context_and_plain_http_needs_none():
    ctx = shared_tls_context()
    clients = [async_client("https://api.telegram.org"), async_client("HTTPS://openrouter.ai/api"),
               async_client("http://127.0.0.1:8080")]
    try:
        assert _tls(clients[0]) is ctx and _tls(clients[1]) is ctx
        assert ctx.verify_mode == ssl.CERT_REQUIRED and ctx.check_hostname
        assert _tls(clients[2]) is not ctx and _tls(clients[2]).verify_mode == ssl.CERT_NONE
    finally:
        for client in clients:
            await client.aclose()
