"""When a request is complex enough that the turn starts with a todo list."""

from __future__ import annotations

import re

KEYWORDS = (
    "refactor",
    "migrate",
    "implement",
    "redesign",
    "rewrite",
    "port ",
    "integrate",
    "optimize",
    "restructure",
    "overhaul",
    "build a",
    "add support",
    "重构",
    "实现",
    "迁移",
    "优化",
    "重写",
    "集成",
    "设计",
    "开发",
)
SEPARATORS = ("，", ",", ";", "；")


def is_complex(text: str) -> bool:
    """≥ 80 characters, a complexity keyword, ≥ 2 separators, or ≥ 14 words."""
    if len(text) >= 80:
        return True
    lowered = text.lower()
    if any(k in lowered for k in KEYWORDS):
        return True
    if sum(text.count(s) for s in SEPARATORS) >= 2:
        return True
    return len(re.findall(r"\S+", text)) >= 14


TODO_REMINDER = (
    "<system-reminder>This request has several parts. Start by calling todoWrite with a short plan "
    "(replace the placeholder item), keep exactly one item in_progress, and mark items completed "
    "as you finish them.</system-reminder>"
)
