"""The start-up's pause of full garbage collections ends whatever happens (`cli._starting`):
a server, or an in-process caller, whose thresholds stayed raised would never run a full
collection again, and its cyclic garbage would pile up for the life of the process."""

from __future__ import annotations

import gc

import pytest

from coder_ls import cli


@pytest.mark.parametrize("argv", [["--help"], ["--version"], ["--no-such-flag"]])
def test_the_collector_is_as_it_was_after_a_start_that_exits_early(argv: list[str]) -> None:
    before = gc.get_threshold()
    with pytest.raises(SystemExit):
        cli.main(argv)
    assert gc.get_threshold() == before


def test_full_collections_are_off_only_while_starting() -> None:
    before = gc.get_threshold()
    with cli._starting():
        assert gc.get_threshold()[:2] == before[:2] and gc.get_threshold()[2] > 1_000_000
    assert gc.get_threshold() == before
