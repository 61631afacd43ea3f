"""The web tools (contract section 22): `web_fetch` and `web_search`.

- `address`: what a URL may reach: its scheme and host read once, the rules' domains matched
  as `sandbox.network`'s are (`guard/netproxy.py`), and loopback, private and link-local
  addresses refused unless a rule names them (SSRF), at resolution time too.
- `fetch`: one page over HTTP(S) with aiohttp: bounded reads (bytes and seconds), no
  credential, no cookie, no proxy from the environment, redirects followed only on the same
  host (another host is a new call, so a new decision of the policy); then HTML to
  Markdown by `html-to-markdown` (imported when the tool first runs), capped.
- `search`: the provider's server tool (`web_search_20250305`) as a tool spec, shaped by the
  rules (a deny rule: not offered at all).

The tools' adapters are `agent/tools/web.py`; the policy's part is `agent/webpolicy.py`.
This package stands in the middle layer: it imports the floor, `guard` and `llm`, never the
agent.
"""
