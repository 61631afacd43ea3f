"""Model-invoked skills (contract section 10): the list in the system prompt and the
`skill` tool that loads one.

The list is one line per skill (name, description, when to use it), after the project
instructions, within `LIST_MAX_CHARS`: every skill's name is always in it, and the
descriptions are shortened to fit (then left out, with over ~600 skills). It changes only
when skill files do, so the cached prompt prefix stays put between turns. The tool puts
the skill's body, its arguments expanded (`$ARGUMENTS`, `$1`…, `${CODER_SKILL_DIR}`),
into the conversation as the tool result. A skill's `` !`cmd` `` lines are *not* run for
the model: a workspace's skill file is not the user's command, so the body says which
command to run and the model runs it with `bash`, under the policy like any other.
`allowed-tools` of a skill the model loads grants nothing for the same reason. Skills
used in a session are kept across `/compact` (`UsedSkills`, re-added after the summary).
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from coder_ls.agent.tools.base import Tool, ToolContext, ToolError, ToolOutput
from coder_ls.engine.agent_api import SkillInfo

LIST_MAX_CHARS = 16_000  # the skills list's budget (≈4k tokens): every name fits, descriptions shrink
LINE_MAX_CHARS = 250
NAME_ONLY_BELOW = 24  # description room per skill under which the list gives names only
BODY_MAX_CHARS = 100_000  # a longer skill is cut with a note saying how long it is and where
KEPT_MAX_CHARS = 12_000  # skill texts re-added after a compaction, in all

SKILLS_HEADER = (
    "\n\n# Skills\n"
    "Instructions for particular tasks, loaded with the `skill` tool when a task matches one "
    "(load it before starting that task):\n"
)


def _describe(s: SkillInfo) -> str:
    text = " ".join(s.description.split())
    if s.when_to_use:
        text += f" Use when: {' '.join(s.when_to_use.split())}"
    return text


def skills_list(skills: Sequence[SkillInfo], budget: int = LIST_MAX_CHARS) -> str:
    """The system prompt's part for `skills` ("" when there are none). Every skill's name is
    in it; when the full lines exceed `budget` characters, each description is shortened to
    the same share of what the names leave, and with too many skills for that, the list
    is the names alone (the `skill` tool's error lists them too)."""
    if not skills:
        return ""
    full = [f"- {s.name}: {_describe(s)}"[:LINE_MAX_CHARS] for s in skills]
    if sum(len(line) + 1 for line in full) <= budget:
        return SKILLS_HEADER + "\n".join(full)
    names = sum(len(s.name) + 5 for s in skills) + len(SKILLS_HEADER) + 80  # and the header and note
    share = (budget - names) // len(skills)
    if share >= NAME_ONLY_BELOW:
        lines = [f"- {s.name}: {_shorten(_describe(s), share)}" for s in skills]
        note = f"(descriptions shortened to {share} characters: {len(skills)} skills)"
        return SKILLS_HEADER + "\n".join([*lines, note])
    note = f"({len(skills)} skills, by name only to fit the list's budget; load one to read it)"
    return SKILLS_HEADER + note + "\n" + ", ".join(s.name for s in skills)


def _shorten(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: max(0, limit - 1)].rstrip() + "…"


class UsedSkills:
    """A session's loaded skills, name -> the text the model was given."""

    def __init__(self) -> None:
        self.texts: dict[str, str] = {}

    def note(self) -> str:
        """What follows a compaction summary: the skills still in force."""
        if not self.texts:
            return ""
        parts, size = [], 0
        for name, text in self.texts.items():
            piece = f"## Skill {name}\n{text}"
            if size + len(piece) > KEPT_MAX_CHARS:
                parts.append(f"## Skill {name}\n(load it again with the skill tool)")
                continue
            parts.append(piece)
            size += len(piece)
        return "\n\n# Skills loaded earlier in this session (still in force)\n\n" + "\n\n".join(parts)


class SkillInput(msgspec.Struct, rename="camel", forbid_unknown_fields=True, frozen=True):
    """Load a skill's instructions (see the Skills list)."""

    name: str
    args: str = ""


def make_skill_tool() -> Tool[SkillInput]:
    async def run(ctx: ToolContext, inp: SkillInput) -> ToolOutput:
        from coder_ls.commands.expand import INLINE, ExpandVars, expand_arguments, inline_command

        skills = {s.name: s for s in ctx.skills()}
        skill = skills.get(inp.name.strip().lstrip("/"))
        if skill is None:
            known = ", ".join(sorted(skills)) or "none"
            raise ToolError(f"no skill named {inp.name!r}. Skills: {known}.")
        body = INLINE.sub(lambda m: f"[run `{inline_command(m)}` with bash if you need its output]", skill.body)
        variables = ExpandVars(skill.skill_dir, skill.plugin_root, project_dir=ctx.root)
        expanded = expand_arguments(body, inp.args.strip() or None, variables)
        text = expanded.text
        if len(text) > BODY_MAX_CHARS:
            where = f" (the whole file: {skill.skill_dir / 'SKILL.md'})" if skill.skill_dir else ""
            cut = f"\n\n[Cut: this skill is {len(text):,} characters; the first {BODY_MAX_CHARS:,} are above{where}.]"
            text = text[:BODY_MAX_CHARS] + cut
        ctx.used_skills[skill.name] = text
        folder = ""
        if skill.skill_dir is not None:
            folder = (
                f" Its folder is {skill.skill_dir}: files the instructions mention (scripts, references)"
                " are there, and you may read them."
            )
        return ToolOutput(f"Skill {skill.name} loaded.{folder} Follow these instructions:\n\n{text}")

    return Tool("skill", "Load a skill's instructions by name (see the Skills list).", SkillInput, run)
