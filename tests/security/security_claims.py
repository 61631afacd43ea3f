"""Every sentence of docs/security.md's "Images and `@` references" and "The threat model
for `!`", mapped to what backs it (issue 36: "docs/security.md's claims are each backed by
a test, and a test fails when a claim is removed from the code").

`ENTRIES` holds one entry per sentence, found by a quote from it. A `claim` names the
tests that hold it and the `MUTATIONS` that take it out of the code (each replaces one
guard with a version that no longer keeps the promise); `scripts/mutate_claims.py` applies
each mutation in turn and shows which of the claim's tests fail. A `limit` (what the doc
says is not stopped) may name tests that show the limit; `figure`, `context`, `heading`
and `index` entries are not promises of behaviour (a figure names the test holding it,
or the benchmark measuring it). `tests/security/test_security_claims.py` checks that the
sections and the table agree, sentence for sentence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

DOC = Path(__file__).resolve().parents[2] / "docs" / "security.md"
SECTIONS = ("## Images and `@` references", "## The threat model for `!`")


def section(text: str, title: str) -> str:
    start = text.index(title)
    end = text.find("\n## ", start + len(title))
    return text[start : end if end != -1 else len(text)]


def sentences(block: str) -> list[str]:
    """A section's sentences: each table row, and each paragraph and bullet split after a
    `.` that ends a sentence (outside backquotes, before a capital, `*`, `` ` `` or `(`)."""
    out: list[str] = []
    body = block.split("\n", 1)[1]
    for para in re.split(r"\n\s*\n", body):
        if para.lstrip().startswith("|"):
            out += [row for row in para.splitlines() if row.startswith("|") and not set(row) <= set("|-: ")]
            continue
        for item in re.split(r"\n(?=- )", para):
            text = " ".join(item.split())
            cur, tick = "", False
            for i, c in enumerate(text):
                cur += c
                tick = not tick if c == "`" else tick
                nxt = text[i + 2] if i + 2 < len(text) else ""
                if not tick and c == "." and text[i + 1 : i + 2] == " " and (nxt.isupper() or nxt in "*`("):
                    out.append(cur.strip())
                    cur = ""
            if cur.strip():
                out.append(cur.strip())
    return [s for s in out if s]


def doc_sentences() -> list[str]:
    text = DOC.read_text()
    return [s for title in SECTIONS for s in sentences(section(text, title))]


@dataclass(frozen=True)
class Entry:
    quote: str  # a piece of the sentence (whitespace as in one line)
    kind: str  # claim | limit | figure | context | heading | index
    tests: tuple[str, ...] = ()  # "path::function"
    mutations: tuple[str, ...] = ()  # names in MUTATIONS
    why: str = ""  # for what is not a claim


IMG = "tests/e2e_agent/test_e2e_images.py::"
REF = "tests/e2e_agent/test_e2e_references.py::"
SRC = "tests/e2e_agent/test_e2e_reference_sources.py::"
ACP = "tests/acp/test_acp_references.py::"
UNIT = "tests/unit/test_reference_resolver.py::"
BANG = "tests/security/test_refused_bang_e2e.py::"
EVAL = "tests/security/test_refused_evaluation.py::"
CORP = "tests/security/test_refused_corpus.py::"
WR = "tests/security/test_refused_writes.py::"
WRE = "tests/security/test_refused_writes_e2e.py::"
SECOND = CORP + "test_second_corpus_figures_stay_within_their_bounds"
MANUAL = CORP + "test_the_manual_corpus_stays_within_its_bounds"
NEW_FILE = WR + "test_a_file_that_does_not_exist_yet_is_a_new_file"


def claim(quote: str, *tests: str, mutations: tuple[str, ...] = ()) -> Entry:
    return Entry(quote, "claim", tests, mutations)


def other(quote: str, kind: str, why: str, *tests: str) -> Entry:
    return Entry(quote, kind, tests, (), why)


ENTRIES: list[Entry] = [
    # --- Images and `@` references ----------------------------------------------------------
    other("Images are hostile input too", "context", "says what the next sentences guard"),
    claim(
        "The bytes are read through `saferead`",
        IMG + "test_a_fifo_and_a_decompression_bomb_are_refused",
        IMG + "test_a_declared_type_that_lies_is_corrected_by_the_bytes",
        IMG + "test_a_bad_image_fails_clearly_and_the_input_is_kept",
    ),
    claim(
        "What is stored in `.coder/blobs/`",
        IMG + "test_images_over_the_api_limits_are_scaled_down",
        IMG + "test_images_are_stored_once_and_come_back_after_resume",
    ),
    other("`tests/e2e_agent/test_e2e_images.py` sends text as a PNG", "index", "names the tests above"),
    claim(
        "attaches only what the `read` tool could read, whatever wrote it",
        SRC + "test_an_untrusted_command_file_does_not_attach_a_denied_file",
        SRC + "test_the_users_skill_and_a_plugin_command_obey_the_same_rule",
        ACP + "test_acp_prompts_and_commands_obey_the_users_deny_rule",
        mutations=("refs.read_decision",),
    ),
    claim(
        "One resolver (`agent/references.py`) takes every reference",
        REF + "test_references_that_the_read_rules_refuse_are_not_attached",
        REF + "test_a_long_file_is_cut_with_a_note",
        SRC + "test_no_spelling_of_a_denied_path_is_attached",
        SRC + "test_a_path_outside_the_workspace_is_not_attached_from_a_command_file",
        UNIT + "test_every_spelling_of_a_denied_file_is_refused_with_a_note",
        UNIT + "test_outside_and_links_out_are_refused_and_a_commands_folder_is_tried_after_the_workspace",
        mutations=("refs.read_decision", "refs.resolution", "refs.cap"),
    ),
    claim(
        "A listing (`@folder/`) leaves out ignored files",
        REF + "test_a_file_a_range_and_a_folder_are_attached",
        UNIT + "test_a_listing_leaves_out_what_the_rules_deny",
        SRC + "test_no_spelling_of_a_denied_path_is_attached",
        mutations=("refs.listing",),
    ),
    claim(
        "Which texts may attach at all is one rule",
        SRC + "test_a_command_body_attaches_what_read_reads_as_claude_code_does",
        SRC + "test_the_users_skill_and_a_plugin_command_obey_the_same_rule",
        UNIT + "test_only_a_prompt_and_an_invoked_command_carry_references",
        UNIT + "test_outside_and_links_out_are_refused_and_a_commands_folder_is_tried_after_the_workspace",
        mutations=("refs.command_folder",),
    ),
    claim(
        "A rule that asks before a file is read is the user's yes only when",
        SRC + "test_an_ask_rule_is_the_users_yes_only_when_they_typed_the_reference",
        UNIT + "test_an_ask_rule_is_a_yes_only_for_a_typed_reference",
        mutations=("refs.ask",),
    ),
    claim(
        "A code action's text, an MCP prompt, an agent definition",
        SRC + "test_texts_the_user_did_not_write_attach_nothing",
        SRC + "test_a_command_body_attaches_what_read_reads_as_claude_code_does",
        ACP + "test_acp_prompts_and_commands_obey_the_users_deny_rule",
        UNIT + "test_an_mcp_prompt_is_text_whatever_it_holds",
        UNIT + "test_one_syntax_trailing_punctuation_brackets_and_fences",
        mutations=("refs.sources", "refs.fences"),
    ),
    claim(
        "A `context: fork` command gives its subagent",
        SRC + "test_a_forked_command_gives_its_subagent_the_same_attachments",
        mutations=("refs.fork",),
    ),
    other("Tests: `tests/e2e_agent/test_e2e_references.py` tries", "index", "names tests mapped above"),
    other("`tests/e2e_agent/test_e2e_reference_sources.py` (issue 36, item 3)", "index", "names tests mapped above"),
    other("`tests/acp/test_acp_references.py` does the same", "index", "names tests mapped above"),
    other("What it cannot stop: a file changed, or a folder swapped", "limit", "a race and a case-insensitive disk"),
    # --- The threat model for `!` -------------------------------------------------------------
    other("`!cmd` is the user's own command", "context", "who the check serves"),
    claim(
        "The refused-command check in front of it",
        BANG + "test_a_cd_before_a_redirection_is_followed",
        BANG + "test_the_agents_turn_goes_on_past_an_unresolvable_path",
        CORP + "test_dangerous_form_is_refused",
        mutations=("bang.off",),
    ),
    other("A user who means to do something destructive", "context", "the threat model's stance"),
    claim(
        "Refusing ordinary work is a failure too",
        CORP + "test_ordinary_command_runs",
        BANG + "test_ordinary_cleanup_runs",
        WR + "test_runs",
        mutations=("bang.strict",),
    ),
    other("**What it evaluates**", "heading", "introduces the list"),
    claim(
        "The variables the persistent shell already holds",
        BANG + "test_a_variable_exported_by_an_earlier_line_is_evaluated",
        BANG + "test_git_work_tree_exported_earlier_keeps_git_clean_out_of_home",
        mutations=("bang.env",),
    ),
    claim(
        "So `export T=~/.bashrc` then",
        BANG + "test_a_variable_exported_by_an_earlier_line_is_evaluated",
        EVAL + "test_dangerous_is_refused",
        mutations=("bang.env",),
    ),
    claim(
        "With that environment a name it lacks is unset",
        EVAL + "test_dangerous_is_refused",
        EVAL + "test_ordinary_runs",
        BANG + "test_an_unset_guarded_variable_never_runs_as_slash",
        mutations=("bang.env",),
    ),
    claim(
        "A caller without the environment gets the old rule",
        EVAL + "test_without_the_shells_environment_an_unknown_variable_stays_unknown",
        CORP + "test_the_shells_environment_is_what_makes_the_variables_knowable",
    ),
    claim(
        "Loops: `for x in WORDS`",
        EVAL + "test_dangerous_is_refused",
        EVAL + "test_ordinary_runs",
        mutations=("bang.loops",),
    ),
    claim("Assignments in the line, where they hold", EVAL + "test_dangerous_is_refused"),
    claim(
        "The cwd: `cd`, `pushd`",
        BANG + "test_a_cd_before_a_redirection_is_followed",
        EVAL + "test_cdpath_goes_where_bash_would_go",
        EVAL + "test_dangerous_is_refused",
        mutations=("bang.cd",),
    ),
    claim("A `cd` in a subshell, a pipe or `sh -c` may end with it", EVAL + "test_dangerous_is_refused"),
    claim(
        "A relative write to a startup file's name after a `cd`",
        EVAL + "test_dangerous_is_refused",
        mutations=("bang.startup_name",),
    ),
    claim(
        "Values that are knowable without running anything",
        EVAL + "test_a_fresh_mktemp_name_is_only_that_name",
        EVAL + "test_ordinary_runs",
        BANG + "test_ordinary_cleanup_runs",
        mutations=("bang.mktemp", "bang.git_top"),
    ),
    claim(
        "Other `$(…)` are unknown",
        EVAL + "test_dangerous_is_refused",
        CORP + "test_dangerous_form_is_refused",
        mutations=("bang.unknown_delete",),
    ),
    claim(
        "Variables that change what a tool acts on",
        EVAL + "test_dangerous_is_refused",
        BANG + "test_git_work_tree_exported_earlier_keeps_git_clean_out_of_home",
        mutations=("bang.git",),
    ),
    claim(
        "Temp directories (`/tmp`, `/var/tmp`, `$TMPDIR`)",
        EVAL + "test_ordinary_runs",
        BANG + "test_ordinary_cleanup_runs",
        SECOND,
        mutations=("bang.temps",),
    ),
    claim(
        "**Where a command writes** is read from its options",
        WR + "test_refused",
        WRE + "test_a_target_named_by_an_option_is_judged",
        MANUAL,
        mutations=("bang.option_targets",),
    ),
    claim(
        "So `-t DIR`, `-tDIR`, `--target-directory=DIR`",
        WR + "test_refused",
        MANUAL,
        mutations=("bang.option_targets", "bang.tree"),
    ),
    claim("A value glued to its option", WR + "test_runs", mutations=("bang.glued",)),
    claim(
        "What the table reads is held by a corpus generated",
        MANUAL,
        mutations=("bang.option_targets",),
    ),
    other("A write may not:", "heading", "introduces the list"),
    claim(
        "plant code that runs later",
        CORP + "test_dangerous_form_is_refused",
        WR + "test_refused",
        WRE + "test_a_target_named_by_an_option_is_judged",
        mutations=("bang.startup",),
    ),
    claim(
        "truncate or replace an existing regular file outside the workspace",
        WR + "test_refused",
        NEW_FILE,
        WRE + "test_an_existing_file_outside_is_not_truncated_nor_extracted_over",
        mutations=("bang.overwrite",),
    ),
    claim(
        "What keeps the file runs",
        WR + "test_runs",
        WRE + "test_new_files_appends_and_extraction_inside_run",
        mutations=("bang.keeps_ignored",),
    ),
    claim(
        "A new file outside runs too",
        WR + "test_runs",
        NEW_FILE,
        WRE + "test_new_files_appends_and_extraction_inside_run",
        mutations=("bang.no_new_files",),
    ),
    claim(
        "put names it cannot know",
        WR + "test_refused",
        WRE + "test_an_existing_file_outside_is_not_truncated_nor_extracted_over",
        MANUAL,
        mutations=("bang.tree",),
    ),
    claim(
        "Into the workspace, `/tmp`, `/opt`",
        WR + "test_runs",
        WRE + "test_new_files_appends_and_extraction_inside_run",
        mutations=("bang.tree_everywhere",),
    ),
    claim("Beyond files (`guard/safetyhost.py`)", WR + "test_refused", WR + "test_runs", mutations=("bang.host",)),
    other("**What it cannot know**", "heading", "introduces the limits"),
    other("Files it does not read", "limit", "scripts, `source`, git config, core.worktree"),
    other(
        "What `read` reads: `while read -r f",
        "limit",
        "an ordinary line still refused",
        CORP + "test_ordinary_command_runs",
    ),
    other("Values decided at run time", "limit", "globs, output, the disk between check and run"),
    other("Writes to a target that is not known", "limit", "unknown targets run", EVAL + "test_dangerous_is_refused"),
    other("What an archive holds or a folder contains", "limit", "names not known: refused; merges not judged"),
    other("Whether a file exists is read when the check runs", "limit", "", NEW_FILE),
    other("`install -d DIR` resets DIR's mode", "limit", "what the table does not judge"),
    other("Tools that edit their own configuration are not judged", "limit", "git config --global"),
    other("Code inside an interpreter beyond quoted shell commands", "limit", "code built from pieces"),
    other("The agent's sandboxed shell gets `TMPDIR`", "limit", "variables the exports do not show"),
    other("**Figures.** Four corpora", "figure", "held by the corpus bounds", CORP + "test_the_corpus_is_large_enough"),
    other("Issue 16's columns are the check before", "context", "reads the table"),
    other("| corpus | method |", "heading", "the table's header"),
    other("| `tests/security/corpus.py` |", "figure", "", CORP + "test_dangerous_form_is_refused",
          CORP + "test_ordinary_command_runs"),
    other("| `corpus_generated.py` `dangerous()`", "figure", "", SECOND),
    other("| `corpus_generated.py` held out |", "figure", "", SECOND),
    other("| `tests/security/test_refused_writes.py` |", "figure", "", WR + "test_refused", WR + "test_runs"),
    other("| `tests/security/corpus_manual/` |", "figure", "", MANUAL),
    other("Two lines of the own corpus", "context", "why lines changed sides", CORP + "test_ordinary_command_runs"),
    other("The before-column of the generated corpus", "figure", "measured once, before issue 16's change"),
    other("Of the manual corpus's 3,456 misses", "figure", "measured on main at c5214a5 (measure.py)"),
    other("After: the one miss is `install -d /etc/`", "figure", "", MANUAL),
    claim(
        "`tests/security/test_refused_corpus.py` holds every corpus to these bounds",
        SECOND,
        MANUAL,
        mutations=("bang.off", "bang.strict"),
    ),
    other("Cost: a usual line is checked", "figure", "measured by hand and benchmarks/bench_safety.py, not a test"),
    other("End to end: `tests/security/test_refused_bang_e2e.py`", "index", "names tests mapped above"),
    other(
        "Each sentence of this section and of",
        "index",
        "this table, held by",
        "tests/security/test_security_claims.py::test_every_sentence_of_the_sections_has_an_entry",
    ),
    other("Five claims have tests but no mutation", "figure", "the claims with an empty `mutations`"),
]  # fmt: skip


# --- mutations: each takes one promise out of the code ------------------------------------


def _refs_allow(*args: Any, **kwargs: Any) -> Any:
    from coder_ls.agent.grants import Decision

    return Decision("allow", "mutated: no read decision")


def _refs_outside(orig: Any) -> Any:
    return lambda root, raw, allow_outside=False: orig(root, raw, allow_outside=True)


def _mcp_prompt_attaches(orig: Any) -> Any:
    def run_agent(**kwargs: Any) -> Any:
        from coder_ls.protocol.actions import References

        return orig(**{"references": References("prompt"), **kwargs})

    return run_agent


def _no_fork_attachments(orig: Any) -> Any:
    async def attached_text(turn: Any, action: Any) -> str:
        return ""

    return attached_text


def _without_env(orig: Any) -> Any:
    def check_command(command: str, root: Any, **kwargs: Any) -> Any:
        kwargs["env"] = None
        return orig(command, root, **kwargs)

    return check_command


def _no_temps(orig: Any) -> Any:
    import dataclasses

    return lambda real, ctx, root_ok=False: orig(real, dataclasses.replace(ctx, temps=()), root_ok=root_ok)


def _no_target_dir(orig: Any) -> Any:
    def role(self: Any, grammar: Any, role: str) -> Any:
        return [] if role in ("target_dir", "chdir", "dir_out") else orig(self, grammar, role)

    return role


def _keeps_ignored(orig: Any) -> Any:
    import dataclasses

    def judge_write(w: Any, ctx: Any) -> Any:
        return orig(dataclasses.replace(w, replaces=True, only_new=False, only_existing=False), ctx)

    return judge_write


def _new_files_refused(orig: Any) -> Any:
    from coder_ls.guard import safetypaths

    def overwrite_refusal(target: str, ctx: Any, *, link: bool = False) -> Any:
        plain = safetypaths.resolve_word(target, ctx, resolve=False)
        if plain and not plain[0].as_posix().startswith("/dev/"):
            where = safetypaths.off_limits(safetypaths.real_path(plain[0]), ctx)
            return f"mutated: any write outside ({where})" if where else None
        return None

    return overwrite_refusal


def _tree_everywhere(orig: Any) -> Any:
    from coder_ls.guard import safetypaths

    def tree_refusal(folder: str, ctx: Any) -> Any:
        resolved = safetypaths.resolve_word(folder + "/", ctx)
        if resolved and not (resolved[0] == ctx.root or ctx.root in resolved[0].parents):
            return f"mutated: any folder outside ({resolved[0]})"
        return orig(folder, ctx)

    return tree_refusal


def _const(value: Any) -> Any:
    return lambda orig: lambda *args, **kwargs: value


# name -> (module, attribute, replacement made from the original)
MUTATIONS: dict[str, tuple[str, str, Any]] = {
    "refs.read_decision": ("coder_ls.agent.references", "read_decision", lambda orig: _refs_allow),
    # the path check of the resolver and of the policy's read decision (one function)
    "refs.resolution": ("coder_ls.agent.paths", "resolve_path", _refs_outside),
    # the cap, where the file is read (the reader stops at it, then cuts the text)
    "refs.cap": ("coder_ls.agent.references", "_read", lambda orig: lambda path, lines, _: orig(path, lines, 10**9)),
    "refs.listing": ("coder_ls.agent.references", "readable", lambda orig: lambda root, config, files: files),
    "refs.command_folder": ("coder_ls.agent.references", "skill_file", _const(None)),
    "refs.ask": ("coder_ls.agent.references", "Where", None),  # special-cased: every source typed
    # an MCP prompt given References like a typed prompt (code actions, agent definitions and
    # loaded skills never reach the resolver: their text is not a turn's prompt, or is fenced)
    "refs.sources": ("coder_ls.commands.mcp_prompts", "RunAgent", _mcp_prompt_attaches),
    "refs.fences": ("coder_ls.agent.references", "prose", lambda orig: lambda text: text),
    "refs.fork": ("coder_ls.agent.subagents", "attached_text", _no_fork_attachments),
    "bang.off": ("coder_ls.guard.safety", "check_command", _const(None)),
    "bang.strict": ("coder_ls.guard.safety", "check_command", _const("Refused: mutated. Nothing was run.")),
    "bang.env": ("coder_ls.guard.safety", "check_command", _without_env),
    "bang.loops": ("coder_ls.guard.shellparse.walk", "loop_value", _const(None)),
    "bang.cd": ("coder_ls.guard.safetypaths", "change_dir", _const(None)),
    "bang.startup_name": ("coder_ls.guard.safetypaths", "startup_name", _const(False)),
    "bang.mktemp": ("coder_ls.guard.safetypaths", "MKTEMP_NAME", None),  # special-cased: a name never made
    "bang.git_top": ("coder_ls.guard.safetypaths", "work_tree_top", _const(None)),
    "bang.git": ("coder_ls.guard.safetypaths", "check_git", _const(None)),
    "bang.temps": ("coder_ls.guard.safetypaths", "off_limits", _no_temps),
    "bang.option_targets": ("coder_ls.guard.writetargets", "Parsed.role", _no_target_dir),
    "bang.glued": ("coder_ls.guard.writetargets", "_literal", lambda orig: lambda value: value),
    "bang.startup": ("coder_ls.guard.safetypaths", "home_startup", _const(None)),
    "bang.overwrite": ("coder_ls.guard.safetypaths", "overwrite_refusal", _const(None)),
    "bang.keeps_ignored": ("coder_ls.guard.safetypaths", "judge_write", _keeps_ignored),
    "bang.no_new_files": ("coder_ls.guard.safetypaths", "overwrite_refusal", _new_files_refused),
    "bang.tree": ("coder_ls.guard.safetypaths", "tree_refusal", _const(None)),
    "bang.tree_everywhere": ("coder_ls.guard.safetypaths", "tree_refusal", _tree_everywhere),
    "bang.host": ("coder_ls.guard.safetyhost", "host_refusal", _const(None)),
    "bang.unknown_delete": ("coder_ls.guard.safety", "_recursive", _const(False)),
}


def apply(name: str) -> None:
    """Put mutation `name` in place, in this process, before the modules that import the
    guard by name are loaded (the script runs this from `sitecustomize`, so the server's
    own process gets it too)."""
    import importlib

    module_name, attr, make = MUTATIONS[name]
    module = importlib.import_module(module_name)
    if name == "refs.ask":
        where = module.Where
        where.of = staticmethod(lambda refs: where(tuple(Path(f) for f in refs.folders), typed=True))
        return
    if name == "bang.mktemp":
        module.MKTEMP_NAME = "\0never"
        return
    owner, _, leaf = attr.rpartition(".")
    target = getattr(module, owner) if owner else module
    setattr(target, leaf, make(getattr(target, leaf)))
