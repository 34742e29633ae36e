"""LLM providers behind one seam (`base.Provider`) and the automatic choice (`choose`)."""

from ccmemory.features.capture.providers.base import Completion, Provider, ProviderError
from ccmemory.features.capture.providers.choose import Choice, choose, describe

__all__ = ["Choice", "Completion", "Provider", "ProviderError", "choose", "describe"]
