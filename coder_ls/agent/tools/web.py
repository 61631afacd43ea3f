"""`web_fetch {url}`: the agent's side of `coder_ls/web` (contract section 22).

The policy has decided before this runs (`agent/webpolicy.py`); here the fetch itself:
a literal private address refused again unless a rule names it (the policy's answer may
come from a hook), the page fetched with bounded reads (`web.fetch`) and converted
(`web.fetch.page_text`, off the event loop: a large page must not stall the server). The web
modules, aiohttp's session and the HTML converter are imported when the tool first runs.
"""

from __future__ import annotations

import asyncio

import msgspec

from coder_ls.agent.tools.base import Tool, ToolContext, ToolError, ToolOutput

__all__ = ["WebFetchInput", "make_web_fetch_tool"]

WEB_FETCH_DESCRIPTION = (
    "Fetch an http(s) URL and read it as Markdown (HTML converted, long pages cut). "
    "A redirect to another host is reported, not followed."
)


class WebFetchInput(msgspec.Struct, forbid_unknown_fields=True):
    url: str


async def _web_fetch(ctx: ToolContext, inp: WebFetchInput) -> ToolOutput:
    from coder_ls.web.address import WebError, is_public, named_by_rule, parse_target, refuse_private
    from coder_ls.web.fetch import fetch_page, page_text

    try:
        target = parse_target(inp.url)
        named = named_by_rule(target.host, ctx.config.rules)
        if target.is_address and not named and not is_public(target.host):
            raise refuse_private(target, target.host)
        ctx.report(f"Fetching {target.url}")
        page = await fetch_page(target, allow_private=named)
    except WebError as exc:
        raise ToolError(str(exc)) from exc
    text, is_error = await asyncio.to_thread(page_text, page)
    return ToolOutput(text, is_error=is_error)


def make_web_fetch_tool() -> Tool[WebFetchInput]:
    return Tool("web_fetch", WEB_FETCH_DESCRIPTION, WebFetchInput, _web_fetch)
