"""`reportFindings`: how `/review` hands its findings to the editor (contract section 11).

Offered only in a turn that `/review` started. Each call adds to the turn's findings and
publishes all of them as diagnostics (source `coder`) through the host, which replaces
the previous review's; a review that reports nothing clears them when its turn ends.
The editor's "Coder: Fix" quick fix on such a diagnostic starts a fix with it in context.
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

from coder_ls.agent.tools.base import Tool, ToolContext, ToolError, ToolOutput
from coder_ls.protocol.edits import Finding

TOOL_NAME = "reportFindings"
MAX_FINDINGS = 200


class FindingInput(msgspec.Struct, rename="camel", forbid_unknown_fields=True, frozen=True):
    path: Annotated[str, msgspec.Meta(description="The file, relative to the workspace")]
    line: Annotated[int, msgspec.Meta(ge=1, description="First line (1-based)")]
    message: Annotated[str, msgspec.Meta(min_length=1, description="What is wrong and why, in one or two sentences")]
    severity: Literal["error", "warning", "information", "hint"] = "warning"
    end_line: Annotated[int, msgspec.Meta(ge=1, description="Last line, if more than one")] | None = None


class ReportFindingsInput(msgspec.Struct, rename="camel", forbid_unknown_fields=True, frozen=True):
    """Report review findings: they appear in the editor as diagnostics."""

    findings: list[FindingInput]


def make_report_findings_tool() -> Tool[ReportFindingsInput]:
    async def run(ctx: ToolContext, inp: ReportFindingsInput) -> ToolOutput:
        found: list[Finding] = []
        for f in inp.findings:
            path = ctx.resolve(f.path)
            if not path.is_file():
                raise ToolError(f"{f.path}: no such file in the workspace")
            end = f.end_line if f.end_line is not None and f.end_line >= f.line else None
            found.append(Finding(str(path), f.line, f.message.strip(), f.severity, end))
        ctx.findings.extend(found)
        del ctx.findings[MAX_FINDINGS:]
        ctx.host.publish_findings(list(ctx.findings))
        files = len({f.path for f in ctx.findings})
        return ToolOutput(
            f"Reported {len(found)} finding(s); {len(ctx.findings)} in {files} file(s) are shown in the editor."
        )

    return Tool(TOOL_NAME, "Report review findings to the editor (as diagnostics).", ReportFindingsInput, run)
