"""Model providers: the provider protocol, the known models, Anthropic and scripted.

Importing this package (or `base` / `models`) imports no provider and no HTTP library.
"""

from coder_ls.llm.base import (
    Provider,
    ProviderError,
    ProviderRequest,
    Restart,
    Retrying,
    Stop,
    StreamItem,
    TextDelta,
    ThinkingDelta,
    ThinkingDone,
    ToolCallDelta,
    ToolCallDone,
    ToolSpec,
    Usage,
)
from coder_ls.llm.factory import make_provider
from coder_ls.llm.models import KNOWN_MODELS, ModelInfo, find_model

__all__ = [
    "KNOWN_MODELS",
    "ModelInfo",
    "Provider",
    "ProviderError",
    "ProviderRequest",
    "Restart",
    "Retrying",
    "Stop",
    "StreamItem",
    "TextDelta",
    "ThinkingDelta",
    "ThinkingDone",
    "ToolCallDelta",
    "ToolCallDone",
    "ToolSpec",
    "Usage",
    "find_model",
    "make_provider",
]
