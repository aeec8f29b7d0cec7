"""The greenhouse in a browser (``[web] listen``): the agent's own page of pins, approvals,
sensors, history and health, safe to leave on the LAN.

:mod:`edge.web.server` (the supervised task: uvicorn under the MCP server's connection bounds),
:mod:`edge.web.app` (the routes, the page's files, the security headers), :mod:`edge.web.gate`
(Host, Origin, cookie, CSRF, rate limits), :mod:`edge.security.web_sessions`
(paired browsers and codes),
:mod:`edge.web.door` (what a role may ask of the operation catalog), :mod:`edge.web.events`
(the live stream). The page itself is ``edge/web/page``: the project's own HTML, CSS and
JavaScript, no build step. The face lists the modules and imports none.
"""

__all__ = ["app", "door", "events", "gate", "server"]
