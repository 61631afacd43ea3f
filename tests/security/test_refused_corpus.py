"""Table-driven: every catastrophic form is refused, no ordinary developer command is."""

from __future__ import annotations

from pathlib import Path

import pytest

from coder_ls.guard.safety import check_command
from security import corpus_generated as generated
from security.corpus import ORDINARY, dangerous
from security.corpus_generated import HOME as GEN_HOME
from security.corpus_generated import ROOT as GEN_ROOT
from security.corpus_generated import Case

ROOT = Path("/work/ws-corpus/proj")
HOME = Path("/work/ws-corpus")  # the workspace's parent is "home", like ~/proj


def check(command: str) -> str | None:
    return check_command(command, ROOT, cwd=ROOT, home=HOME)


def test_the_corpus_is_large_enough():
    assert len(dangerous()) >= 300 and len(set(dangerous())) == len(dangerous())
    assert len(ORDINARY) >= 100


@pytest.mark.parametrize("command", dangerous())
def test_dangerous_form_is_refused(command):
    assert check(command), command


@pytest.mark.parametrize("command", ORDINARY)
def test_ordinary_command_runs(command):
    assert check(command) is None


# The second corpus (generated, labelled by construction; see corpus_generated.py) and its
# held-out part. The bounds are the figures measured when issue 16 was closed (docs/security.md,
# "The threat model for `!`"): a change may not let more through or refuse more than this.
BOUNDS = {  # corpus: (dangerous that may get through, ordinary that may be refused)
    "generated": (0, 0),
    "held out": (0, 0),
}


def _misses(dangerous: list[Case], ordinary: list[Case]) -> tuple[list[str], list[str]]:
    def run(case: Case) -> str | None:
        return check_command(case.line, GEN_ROOT, cwd=GEN_ROOT, home=GEN_HOME, env=case.environment())

    return [c.line for c in dangerous if not run(c)], [c.line for c in ordinary if run(c)]


@pytest.mark.parametrize(
    ("name", "dangerous", "ordinary"),
    [
        ("generated", generated.dangerous, generated.ordinary),
        ("held out", generated.held_out_dangerous, generated.held_out_ordinary),
    ],
)
def test_second_corpus_figures_stay_within_their_bounds(name, dangerous, ordinary):
    generated.materialize()
    cases, fine = dangerous(), ordinary()
    assert len(cases) >= (250 if name == "generated" else 150) and len(fine) >= (120 if name == "generated" else 60)
    through, refused = _misses(cases, fine)
    most_through, most_refused = BOUNDS[name]
    assert len(through) <= most_through, f"{name}: {len(through)}/{len(cases)} dangerous got through: {through[:20]}"
    assert len(refused) <= most_refused, f"{name}: {len(refused)}/{len(fine)} ordinary refused: {refused[:20]}"


def test_the_manual_corpus_stays_within_its_bounds():
    """The third corpus, generated from the option tables of cp, mv, install, ln, rsync and
    tar as their `--help` gives them (tests/security/corpus_manual/README.md): 1/3,926
    dangerous through and 28/2,494 ordinary refused when issue 36 was closed (3,456 and 75
    before)."""
    from security.corpus_manual import generate, measure

    generate.materialize()
    lines = generate.corpus()
    dangerous = [x for x in lines if x.dangerous]
    assert len(dangerous) >= 3500 and len(lines) - len(dangerous) >= 2000
    assert all(tool in {x.tool for x in dangerous} for tool in ("cp", "mv", "install", "ln", "rsync", "tar"))
    through, refused = measure.figures(lines)
    assert len(through) <= 1, [x.line for x in through[:20]]
    assert len(refused) <= 28, [x.line for x in refused[:20]]


def test_the_shells_environment_is_what_makes_the_variables_knowable():
    """Without the shell's environment the same corpus refuses the lines that use it
    (the figures above depend on the server passing it)."""
    generated.materialize()
    uses_env = [c for c in generated.ordinary() if c.env]
    refused = [c for c in uses_env if check_command(c.line, GEN_ROOT, cwd=GEN_ROOT, home=GEN_HOME)]
    assert len(refused) >= len(uses_env) // 2, refused
