"""The optional LLM: Anthropic's Messages API through the `anthropic` package.

Used only when `anthropic_api_key` is configured (the LLM observer, grounded corpus
answers). Tests point `anthropic_base_url` at a local fake server, never the network.
Whatever the model returns is data to be parsed, never instructions to follow.
"""

from __future__ import annotations

from mnemo.config import Settings
from mnemo.errors import Unavailable
from mnemo.extras import require


def is_configured(settings: Settings) -> bool:
    return bool(settings.anthropic_api_key)


def complete(settings: Settings, system: str, user: str, *, max_tokens: int = 1024, timeout: float = 60.0) -> str:
    """One Messages API call; the text of the reply. Raises Unavailable on any API failure."""
    # imported lazily: hooks and most processes never need it, and it is an extra
    anthropic = require("anthropic", "llm", "the LLM (anthropic_api_key is set)")

    client = anthropic.Anthropic(
        api_key=settings.anthropic_api_key,
        base_url=settings.anthropic_base_url or None,
        timeout=timeout,
        max_retries=1,
    )
    try:
        message = client.messages.create(
            model=settings.anthropic_model,
            max_tokens=max_tokens,
            system=system,
            messages=[{"role": "user", "content": user}],
        )
    except anthropic.APIError as err:
        raise Unavailable(f"LLM call failed: {type(err).__name__}: {err}") from None
    finally:
        client.close()
    return "".join(block.text for block in message.content if isinstance(block, anthropic.types.TextBlock))
