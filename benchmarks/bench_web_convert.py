"""web_fetch's HTML to Markdown: the candidate libraries on a 1 MB documentation page.

The page is real documentation (tests/web/corpus: NumPy's built HTML, BSD-3-Clause),
its article repeated inside one page until it is about 1 MB, so what is measured is the
markup docs are made of (highlighted code spans, tables of contents, nav, scripts).
Each candidate converts it in a fresh interpreter: import time, then the median of 5
conversions, and whether headings, fenced code and links came through.

    python benchmarks/bench_web_convert.py [--python PY] [--size BYTES]

`--python`: an interpreter where the candidates are installed (`pip install
html-to-markdown html2text markdownify` into a scratch venv); the missing are skipped.
Results: benchmarks/README.md, "web_fetch: HTML to Markdown".

Also the tokens the web tools add to the fixed prompt (chars/4 of their JSON as sent,
as `bench_agent.py`'s `fixed_prompt_tokens` counts).
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "web" / "corpus" / "numpy-2.2-broadcasting.html"

CANDIDATES = {
    "html-to-markdown": (
        "from html_to_markdown import convert, ConversionOptions",
        "convert(HTML, ConversionOptions(heading_style='atx', code_block_style='backticks'))",
    ),
    "html2text": ("import html2text", "html2text.html2text(HTML)"),
    "markdownify": ("from markdownify import markdownify", "markdownify(HTML, heading_style='ATX')"),
}

RUNNER = r"""
import json, statistics, sys, time
HTML = open(sys.argv[1], encoding="utf-8").read()
t0 = time.perf_counter()
{imp}
imported = time.perf_counter() - t0
times = []
for _ in range(5):
    t0 = time.perf_counter()
    out = {call}
    times.append(time.perf_counter() - t0)
out = out if isinstance(out, str) else str(getattr(out, "content", out))
print(json.dumps({{"import_ms": imported * 1000, "convert_ms": statistics.median(times) * 1000, "out": out}}))
"""


def one_mb_page(size: int) -> str:
    html = CORPUS.read_text(encoding="utf-8")
    start, end = html.find("<article"), html.find("</article>") + len("</article>")
    article = html[start:end]
    copies = max(1, (size - len(html)) // len(article) + 1)
    return html[:start] + article * copies + html[end:]


def quality(markdown: str) -> str:
    heads = sum(1 for line in markdown.splitlines() if re.match(r"^#{1,6} \S", line))
    fences = markdown.count("```") // 2
    links = len(re.findall(r"\[[^\]]+\]\([^)]+\)", markdown))
    return f"{heads} headings, {fences} fenced blocks, {links} links"


def tool_tokens() -> dict[str, float]:
    sys.path.insert(0, str(ROOT))
    from coder_ls.agent.tools.web import make_web_fetch_tool
    from coder_ls.llm.anthropic_convert import tool_to_api
    from coder_ls.protocol.config import Config
    from coder_ls.web.search import web_search_spec

    fetch = json.dumps(tool_to_api(make_web_fetch_tool().spec()))
    spec = web_search_spec(Config())
    search = json.dumps(tool_to_api(spec)) if spec is not None else ""
    return {"web_fetch": len(fetch) / 4, "web_search": len(search) / 4}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--size", type=int, default=1 << 20)
    args = parser.parse_args()
    page = one_mb_page(args.size)
    path = Path("/tmp/bench_web_convert.html")
    path.write_text(page, encoding="utf-8")
    print(f"page: {len(page.encode()):,} bytes ({CORPUS.name}'s article repeated)")
    for name, (imp, call) in CANDIDATES.items():
        code = RUNNER.format(imp=imp, call=call)
        done = subprocess.run([args.python, "-c", code, str(path)], capture_output=True, text=True)
        if done.returncode != 0:
            print(f"{name}: skipped ({done.stderr.strip().splitlines()[-1] if done.stderr.strip() else 'failed'})")
            continue
        result = json.loads(done.stdout)
        print(
            f"{name}: import {result['import_ms']:.0f} ms, convert {result['convert_ms']:.0f} ms (median of 5), "
            f"{len(result['out']):,} chars out; {quality(result['out'])}"
        )
    tokens = tool_tokens()
    print(
        f"tools: web_fetch {tokens['web_fetch']:.0f} + web_search {tokens['web_search']:.0f} = "
        f"{sum(tokens.values()):.0f} tokens (chars/4 of their JSON as sent)"
    )


if __name__ == "__main__":
    main()
