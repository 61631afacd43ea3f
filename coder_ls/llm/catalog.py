"""Models as the API knows them: the built-in table merged with the Models API.

The built-in table (`coder_ls.llm.models.KNOWN_MODELS`) is what the server knows without
asking; it can age. The Models API (`GET /v1/models`) says what *this account* can use
today, with each model's display name, context window, output limit, lifecycle
(`active` / `deprecated` / `retired`), its line (`sonnet`, `opus`...) and, where given,
its thinking types and effort levels. `ModelCatalog` merges the two:

- **Resolving an alias.** `sonnet`, `opus`, `haiku`, `fable` (the default model is
  `sonnet`) name the newest *active* model of that line the API lists (newest
  `created_at` first), else the first of that line in the built-in table that is not
  deprecated. A model id is never replaced: the user chose it.
- **What a request may ask for** (`info`): the API's context window and output limit win;
  its thinking types and effort levels win where it gives them; the table supplies the
  rest (thinking style, efforts), and for an id it does not know, the id's family.
- **Deprecations.** A model's end of life comes from the Models API (`retires_at`,
  `lifecycle`) and from the installed SDK's own data (`anthropic/_data/deprecated_models.py`,
  read as a literal when the provider's client is built, without importing the SDK). `deprecation(name)`
  gives the date and the model to switch to (the newest active model of its line).
  `take_warning` gives the warning for a model once per server.
- **The cache.** The listing is cached on disk (`~/.cache/coder-ls/models-<key>.json`,
  key = endpoint and credential, hashed) for `CACHE_SECONDS`; a fresh server uses it at
  once and refreshes it in the background (the warm-up). No listing (offline, an
  endpoint without `/v1/models`, a failure): the built-in table alone.

Light: no SDK import, no network here. The provider fetches; this module merges.
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import time
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, date, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from coder_ls.llm.models import FAMILIES, KNOWN_MODELS, ModelInfo, ThinkingStyle, find_model, model_info

if TYPE_CHECKING:
    from coder_ls.protocol.results import ModelData

__all__ = ["CACHE_SECONDS", "ApiModel", "Deprecation", "ModelCatalog", "cache_file_for", "model_data", "parse_sdk_date"]

log = logging.getLogger(__name__)

CACHE_SECONDS = 6 * 3600
_EFFORT_ORDER = ("low", "medium", "high", "xhigh", "max")


class _Support(msgspec.Struct, frozen=True):
    supported: bool = False


class _ThinkingTypes(msgspec.Struct, frozen=True):
    adaptive: _Support = _Support()
    enabled: _Support = _Support()


class _Thinking(msgspec.Struct, frozen=True):
    supported: bool = False
    types: _ThinkingTypes | None = None


class _Effort(msgspec.Struct, frozen=True):
    supported: bool = False
    low: _Support | None = None
    medium: _Support | None = None
    high: _Support | None = None
    xhigh: _Support | None = None
    max: _Support | None = None


class _Capabilities(msgspec.Struct, frozen=True):
    thinking: _Thinking | None = None
    effort: _Effort | None = None


class ApiModel(msgspec.Struct, frozen=True):
    """One model of a `GET /v1/models` listing (the fields the catalog reads)."""

    id: str
    display_name: str = ""
    created_at: str = ""
    lifecycle: str = "active"
    line: str | None = None
    max_input_tokens: int | None = None
    max_tokens: int | None = None
    deprecated_at: str | None = None
    retires_at: str | None = None
    capabilities: _Capabilities | None = None


class Deprecation(msgspec.Struct, frozen=True):
    model: str
    end_of_life: date | None  # None: deprecated, no date given
    replacement: str | None
    retired: bool = False  # the API no longer serves it (lifecycle "retired")

    def describe(self, today: date | None = None) -> str:
        today = today or datetime.now(UTC).date()
        if self.retired or (self.end_of_life is not None and self.end_of_life <= today):
            when = f" on {self.end_of_life:%B %-d, %Y}" if self.end_of_life else ""
            text = f"The model {self.model} reached its end of life{when} and is no longer served."
        elif self.end_of_life is not None:
            text = f"The model {self.model} is deprecated and reaches its end of life on {self.end_of_life:%B %-d, %Y}."
        else:
            text = f"The model {self.model} is deprecated."
        if self.replacement:
            text += f' Switch to {self.replacement}: `/model {self.replacement}`, or "model" in your settings.'
        return text


_ORDINAL = re.compile(r"(\d+)(st|nd|rd|th)\b")


def parse_sdk_date(text: str) -> date | None:
    """`"November 30th, 2026"` (the SDK's wording) or an ISO date/datetime."""
    text = text.strip()
    with contextlib.suppress(ValueError):
        return datetime.strptime(_ORDINAL.sub(r"\1", text), "%B %d, %Y").date()
    with contextlib.suppress(ValueError):
        return datetime.fromisoformat(text.replace("Z", "+00:00")).date()
    return None


def _thinking_of(caps: _Capabilities | None) -> ThinkingStyle | None:
    if caps is None or caps.thinking is None:
        return None
    if not caps.thinking.supported:
        return "none"
    types = caps.thinking.types
    if types is None:
        return None
    adaptive, budget = types.adaptive.supported, types.enabled.supported
    if adaptive and budget:
        return "adaptive"
    if adaptive:
        return "adaptive-only"
    return "budget" if budget else "none"


def _efforts_of(caps: _Capabilities | None) -> tuple[str, ...] | None:
    if caps is None or caps.effort is None:
        return None
    if not caps.effort.supported:
        return ()
    return tuple(level for level in _EFFORT_ORDER if (s := getattr(caps.effort, level)) is not None and s.supported)


_WORD = re.compile(r"[a-z]+")


def _family_of(info: ModelInfo | None, api: ApiModel | None) -> str:
    """A model's line: the API's `line` when it gives one (it is optional), else the
    table's, else read from the API's own data, the id and then the display name
    (`claude-sonnet-9-9`, "Claude Sonnet 9.9"): a model released after this package is
    followed without a new one."""
    if api is not None and api.line:
        return api.line
    if info is not None and info.family:
        return info.family
    if api is not None:
        for text in (api.id, api.display_name):
            found = next((w for w in _WORD.findall(text.lower()) if w in FAMILIES), None)
            if found:
                return found
    return ""


class ModelCatalog:
    """See the module docstring. One per server (the agent owns it)."""

    def __init__(self, cache_file: Path | None = None, *, now: Callable[[], float] = time.time) -> None:
        self.cache_file = cache_file
        self._now = now
        self._api: dict[str, ApiModel] = {}  # by id, in listing order (newest first)
        self._fetched_at = 0.0
        self._sdk_dates: dict[str, date] = {}
        self._warned: set[str] = set()
        self.last_error = ""  # why the last refresh failed ("" when it did not)
        if cache_file is not None:
            self._load_cache(cache_file)

    # -- the listing
    @property
    def listed(self) -> bool:
        """The Models API has answered (now or within the cache's lifetime)."""
        return bool(self._api)

    def stale(self) -> bool:
        return self._now() - self._fetched_at > CACHE_SECONDS

    def update(self, models: Iterable[Mapping[str, Any]]) -> None:
        """Take a fresh listing (the raw JSON objects of `GET /v1/models`) and cache it."""
        raw = [dict(m) for m in models]
        self._set(raw, self._now())
        if self.cache_file is not None:
            self._store_cache(self.cache_file, raw)

    def _set(self, raw: list[dict[str, Any]], fetched_at: float) -> None:
        parsed: dict[str, ApiModel] = {}
        for item in raw:
            try:
                model = msgspec.convert(item, ApiModel, strict=False)
            except msgspec.ValidationError:
                continue  # one odd entry does not void the listing
            parsed[model.id] = model
        self._api, self._fetched_at = parsed, fetched_at

    def _load_cache(self, path: Path) -> None:
        try:
            data = json.loads(path.read_bytes())
            if isinstance(data, dict) and isinstance(data.get("models"), list):
                self._set(data["models"], float(data.get("fetchedAt", 0)))
        except (OSError, ValueError, TypeError):
            return

    def _store_cache(self, path: Path, raw: list[dict[str, Any]]) -> None:
        from coder_ls.fsutil import ANYWHERE, write_atomic

        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            body = json.dumps({"fetchedAt": self._fetched_at, "models": raw}, default=str)
            write_atomic(path, body.encode(), root=ANYWHERE, new_mode=0o600, fsync=False)  # the user's cache
        except OSError as exc:  # an unwritable cache only costs a refresh next time
            log.debug("models cache not written: %s", exc)

    def note_sdk_deprecations(self, dates: Mapping[str, str]) -> None:
        """The SDK's end-of-life table (`anthropic._data.DEPRECATED_MODELS`)."""
        for name, text in dates.items():
            when = parse_sdk_date(text)
            if when is not None:
                self._sdk_dates[name] = when

    # -- questions
    def resolve(self, name: str) -> str:
        """The model id for `name`: an alias (`sonnet`...) becomes the newest active model
        of its line; anything else is returned as it is."""
        family = name.strip().lower()
        if family not in FAMILIES:
            return name
        listed = [
            m for m in self._api.values() if m.lifecycle == "active" and _family_of(model_info(m.id), m) == family
        ]
        if listed:
            return max(listed, key=lambda m: m.created_at).id
        for info in KNOWN_MODELS:
            if info.family == family and self._eol(info.name) is None:
                return info.name
        return next(info.name for info in KNOWN_MODELS if info.family == family)

    def _api_model(self, name: str) -> ApiModel | None:
        found = self._api.get(name)
        if found is None:
            info = find_model(name)
            if info is not None:
                found = self._api.get(info.name) or next((self._api[a] for a in info.aliases if a in self._api), None)
        return found

    def info(self, name: str) -> ModelInfo | None:
        """What a request to `name` (an id or alias) may ask for, API first, table second."""
        name = self.resolve(name)
        base = model_info(name)
        api = self._api_model(name)
        if api is None:
            return base
        if base is None:
            base = ModelInfo(name, "anthropic", 200_000, "", 8192)
        return msgspec.structs.replace(
            base,
            context_window=api.max_input_tokens or base.context_window,
            max_output_tokens=api.max_tokens or base.max_output_tokens,
            description=base.description or api.display_name,
            thinking=_thinking_of(api.capabilities) or base.thinking,
            efforts=e if (e := _efforts_of(api.capabilities)) is not None else base.efforts,
            family=_family_of(base, api),
        )

    def display_name(self, name: str) -> str:
        api = self._api_model(self.resolve(name))
        return api.display_name if api is not None else ""

    def _eol(self, name: str) -> tuple[date | None, bool] | None:
        """(end of life, retired) for a deprecated model; None for a current one."""
        api = self._api_model(name)
        info = find_model(name)
        sdk = self._sdk_dates.get(name) or (self._sdk_dates.get(info.name) if info else None)
        if api is not None and api.lifecycle in ("deprecated", "retired"):
            when = parse_sdk_date(api.retires_at) if api.retires_at else sdk
            return when, api.lifecycle == "retired"
        if sdk is not None:
            return sdk, False
        return None

    def deprecation(self, name: str) -> Deprecation | None:
        model = self.resolve(name)
        found = self._eol(model)
        if found is None:
            return None
        when, retired = found
        family = _family_of(find_model(model), self._api_model(model))
        replacement = self.resolve(family) if family in FAMILIES else None
        if replacement == model or (replacement is not None and self._eol(replacement) is not None):
            replacement = None
        return Deprecation(model=model, end_of_life=when, replacement=replacement, retired=retired)

    def take_warning(self, name: str) -> str | None:
        """The deprecation warning for `name`, the first time it is asked for; else None."""
        dep = self.deprecation(name)
        if dep is None or dep.model in self._warned:
            return None
        self._warned.add(dep.model)
        return dep.describe()

    def listing(self) -> list[ModelInfo]:
        """What `/model` offers: the API's models (not retired) when it has answered, else
        the built-in table; `scripted` always."""
        if not self._api:
            return list(KNOWN_MODELS)
        out = [self.info(m.id) or ModelInfo(m.id, "anthropic", 200_000, m.display_name) for m in self._api.values()
               if m.lifecycle != "retired"]  # fmt: skip
        out += [m for m in KNOWN_MODELS if m.provider != "anthropic"]
        return out


def cache_file_for(env: Mapping[str, str], base_url: str | None, credential: str | None) -> Path:
    """Where the listing for this endpoint and credential is cached."""
    import hashlib

    from coder_ls.userdirs import cache_dir

    key = hashlib.sha256(f"{base_url or ''}\0{credential or ''}".encode()).hexdigest()[:16]
    return cache_dir(env) / f"models-{key}.json"


def model_data(catalog: ModelCatalog, current: str, provider: str) -> ModelData:
    """`/model`'s result data: the catalog's listing, each model with its limits and, when
    deprecated, its end of life and replacement; `current` resolved."""
    from coder_ls.protocol.results import ModelData
    from coder_ls.protocol.results import ModelInfo as WireModel

    models = []
    for info in catalog.listing():
        dep = catalog.deprecation(info.name) if info.provider == "anthropic" else None
        models.append(
            WireModel(
                name=info.name,
                provider=info.provider,
                description=info.description,
                display_name=catalog.display_name(info.name),
                family=info.family,
                context_window=info.context_window,
                max_output_tokens=info.max_output_tokens,
                deprecated=dep is not None,
                end_of_life=dep.end_of_life.isoformat() if dep and dep.end_of_life else None,
                replacement=dep.replacement if dep else None,
            )
        )
    resolved = catalog.resolve(current) if provider != "scripted" else current
    return ModelData(
        current=current, provider=provider, models=models, resolved=resolved,
        source="api" if catalog.listed else "builtin",
    )  # fmt: skip
