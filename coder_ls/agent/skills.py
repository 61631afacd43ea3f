"""Model-invoked skills (contract section 10): the list in the system prompt and the
`skill` tool that loads one.

The list is one line per skill (name, description, when to use it), after the project
instructions, capped at `LIST_MAX_CHARS` (Claude Code's is about 6 kB): it changes only
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

LIST_MAX_CHARS = 6_000
LINE_MAX_CHARS = 250
BODY_MAX_CHARS = 20_000
KEPT_MAX_CHARS = 12_000  # skill texts re-added after a compaction, in all

SKILLS_HEADER = (
    "\n\n# Skills\n"
    "Instructions for particular tasks, loaded with the `skill` tool when a task matches one "
    "(load it before starting that task):\n"
)


def skills_list(skills: Sequence[SkillInfo]) -> str:
    """The system prompt's part for `skills` ("" when there are none)."""
    if not skills:
        return ""
    lines: list[str] = []
    size = 0
    for i, s in enumerate(skills):
        text = " ".join(s.description.split())
        if s.when_to_use:
            text += f" Use when: {' '.join(s.when_to_use.split())}"
        line = f"- {s.name}: {text}"[:LINE_MAX_CHARS]
        if size + len(line) > LIST_MAX_CHARS:
            lines.append(f"- ({len(skills) - i} more skills not listed; load one by name if you know it)")
            break
        lines.append(line)
        size += len(line) + 1
    return SKILLS_HEADER + "\n".join(lines)


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
        from coder_ls.engine.commands.expand import INLINE, ExpandVars, expand_arguments, inline_command

        skills = {s.name: s for s in ctx.skills()}
        skill = skills.get(inp.name.strip().lstrip("/"))
        if skill is None:
            known = ", ".join(sorted(skills)) or "none"
            raise ToolError(f"no skill named {inp.name!r}. Skills: {known}.")
        body = INLINE.sub(lambda m: f"[run `{inline_command(m)}` with bash if you need its output]", skill.body)
        variables = ExpandVars(skill.skill_dir, skill.plugin_root, project_dir=ctx.root)
        expanded = expand_arguments(body, inp.args.strip() or None, variables)
        text = expanded.text[:BODY_MAX_CHARS]
        ctx.used_skills[skill.name] = text
        return ToolOutput(f"Skill {skill.name} loaded. Follow these instructions:\n\n{text}")

    return Tool("skill", "Load a skill's instructions by name (see the Skills list).", SkillInput, run)
