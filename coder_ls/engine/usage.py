"""The tokens a session spent, for `/cost` (contract section 19).

Every model response's usage is added here by the turn (and by a compaction's summary
request), per model, so that a session that switched models is priced model by model.
The tally lives with the loaded session (a session extension): it counts what this server
spent since it loaded the session, not what an earlier server spent (the session log does
not record usage).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from coder_ls.protocol.config import ModelPrice
from coder_ls.protocol.results import CostData, TokenTally


@dataclass
class Tokens:
    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0

    def add(self, other: Tokens) -> None:
        self.input += other.input
        self.output += other.output
        self.cache_read += other.cache_read
        self.cache_write += other.cache_write


@dataclass
class SessionUsage:
    """Per model: the session's tokens, and those of its last submission that used any."""

    session: dict[str, Tokens] = field(default_factory=dict)
    last_turn: dict[str, Tokens] = field(default_factory=dict)
    last_submission: str = ""

    def add(self, submission_id: str, model: str, tokens: Tokens) -> None:
        if submission_id != self.last_submission:
            self.last_submission, self.last_turn = submission_id, {}
        self.session.setdefault(model, Tokens()).add(tokens)
        self.last_turn.setdefault(model, Tokens()).add(tokens)


def price_of(model: str, pricing: dict[str, ModelPrice]) -> ModelPrice | None:
    """The price of the longest key of `pricing` that `model` starts with."""
    keys = [k for k in pricing if model.startswith(k)]
    return pricing[max(keys, key=len)] if keys else None


def tally(by_model: dict[str, Tokens], pricing: dict[str, ModelPrice]) -> TokenTally:
    total, usd = Tokens(), 0.0
    priced = True
    for model, tokens in by_model.items():
        total.add(tokens)
        price = price_of(model, pricing)
        if price is None:
            priced = False
            continue
        usd += (
            tokens.input * price.input
            + tokens.output * price.output
            + tokens.cache_read * price.cache_read
            + tokens.cache_write * price.cache_write
        ) / 1_000_000
    return TokenTally(
        input=total.input, output=total.output, cache_read=total.cache_read, cache_write=total.cache_write,
        usd=round(usd, 6) if priced else None,
    )  # fmt: skip


def _line(label: str, t: TokenTally) -> str:
    price = f"≈ ${t.usd:.4f}" if t.usd is not None else "no price for this model (set `pricing`)"
    return (
        f"{label:<10}{t.input:>10,} in  {t.output:>9,} out  {t.cache_read:>10,} cache read  "
        f"{t.cache_write:>9,} cache write  {price}"
    )


def cost_report(usage: SessionUsage, pricing: dict[str, ModelPrice]) -> tuple[str, CostData]:
    data = CostData(
        session=tally(usage.session, pricing), last_turn=tally(usage.last_turn, pricing), models=list(usage.session)
    )
    lines = [
        _line("Session", data.session),
        _line("Last turn", data.last_turn),
        "Prices are an estimate from the configuration's `pricing` (US dollars per million tokens); "
        "the tokens are what the API reported since this server loaded the session.",
    ]
    return "\n".join(lines), data
