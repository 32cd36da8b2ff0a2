"""Message scoping strategies, chosen by name. Importing this package registers the built-ins."""

from orrery.memory.scoping import last_n, relevance, summary, token_budget
from orrery.memory.scoping.base import (
    HistoryMessage,
    HistorySource,
    MessageScopingStrategy,
    ReceiptItem,
    ScopedMessage,
    ScopingContext,
    ScopingResult,
    get_strategy,
    register_strategy,
    strategy_names,
)

__all__ = [
    "HistoryMessage",
    "HistorySource",
    "MessageScopingStrategy",
    "ReceiptItem",
    "ScopedMessage",
    "ScopingContext",
    "ScopingResult",
    "get_strategy",
    "last_n",
    "register_strategy",
    "relevance",
    "strategy_names",
    "summary",
    "token_budget",
]
