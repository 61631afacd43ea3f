"""A real HTTP server on 127.0.0.1 serving the pages the web_fetch tests fetch (aiohttp).

    async with PageServer() as pages:
        pages.url("/page")          # http://127.0.0.1:<port>/page
        pages.url("/page", "localhost")   # the same server under another host name
        pages.seen                  # every request: (path, headers)

Pages: `/page` (HTML with a heading, a code block, a link), `/big` (an HTML page of
about 1.2 MB), `/huge` (8 MB of text, past the read limit), `/redirect-same` (to `/page`
on the same host), `/redirect-other` (to `/page` under the host name `localhost`),
`/loop` (redirects to itself), `/slow` (answers after `slow_seconds`), `/binary`
(`application/octet-stream`), `/text` (plain text), `/cookie` (sets a cookie, then
redirects to `/page`: the next request must not carry it), `/missing` (404).
"""

from __future__ import annotations

import asyncio
from types import TracebackType
from typing import Any

from aiohttp import web

PAGE = """<!doctype html>
<html><head><title>Local page</title><script>var secret = "do-not-show";</script>
<style>body { color: red }</style></head>
<body>
<h1>Local heading</h1>
<p>Some <strong>bold</strong> text and <a href="https://docs.python.org/3/">a link</a>.</p>
<pre><code class="language-python">def add(a, b):
    return a + b
</code></pre>
</body></html>
"""


def big_page(size: int = 1_200_000) -> str:
    section = (
        "<h2>Section {n}</h2>\n<p>Paragraph {n} with <a href='/s{n}'>a link</a> and <code>inline()</code> "
        "text that goes on for a while to look like documentation prose.</p>\n"
        "<pre><code>for i in range({n}):\n    print(i)\n</code></pre>\n"
        "<table><tr><th>a</th><th>b</th></tr><tr><td>{n}</td><td>x</td></tr></table>\n"
    )
    parts, total, n = [], 0, 0
    while total < size:
        piece = section.format(n=n)
        parts.append(piece)
        total += len(piece)
        n += 1
    return "<!doctype html><html><body><h1>Big</h1>\n" + "".join(parts) + "</body></html>"


class PageServer:
    def __init__(self, slow_seconds: float = 5.0) -> None:
        self.slow_seconds = slow_seconds
        self.seen: list[tuple[str, dict[str, str]]] = []
        self.port = 0
        self._runner: web.AppRunner | None = None

    def url(self, path: str, host: str = "127.0.0.1") -> str:
        return f"http://{host}:{self.port}{path}"

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        self.seen.append((request.path, dict(request.headers)))
        path = request.path
        if path == "/page":
            return web.Response(text=PAGE, content_type="text/html")
        if path == "/big":
            return web.Response(text=big_page(), content_type="text/html")
        if path == "/huge":
            return web.Response(body=b"x" * (8 << 20), content_type="text/plain")
        if path == "/redirect-same":
            raise web.HTTPFound("/page")
        if path == "/redirect-other":
            raise web.HTTPFound(self.url("/page", "localhost"))
        if path == "/loop":
            raise web.HTTPFound("/loop")
        if path == "/slow":
            await asyncio.sleep(self.slow_seconds)
            return web.Response(text="late")
        if path == "/binary":
            return web.Response(body=bytes(range(256)) * 4, content_type="application/octet-stream")
        if path == "/text":
            return web.Response(text="plain words\n", content_type="text/plain")
        if path == "/cookie":
            response = web.HTTPFound("/page")
            response.set_cookie("session", "s3cret")
            raise response
        raise web.HTTPNotFound(text="<html><body><h1>Not here</h1></body></html>", content_type="text/html")

    async def __aenter__(self) -> PageServer:
        app = web.Application()
        app.router.add_route("GET", "/{tail:.*}", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server: Any = site._server
        self.port = server.sockets[0].getsockname()[1]
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
