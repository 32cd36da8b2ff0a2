"""Recall from the person's earlier chats: the messages of their own other chats most related to the
current one, within what the conversation budget leaves (up to `budget_earlier_chats`), quoted and
dated, with a receipt. `queries` says whom and what may be recalled, `pool` how candidates are
found, `ranked` how they are ranked, `fit` how they are fitted and shown. The working context
(`orrery.context`) calls it on every turn; the docs' "Memory across chats" page explains it.
"""

from orrery.memory.recall.fit import KIND, Fitted, RecalledItem, fit
from orrery.memory.recall.pool import gather
from orrery.memory.recall.queries import Scope
from orrery.memory.recall.ranked import RecallPool, RecallRequest

__all__ = ["KIND", "Fitted", "RecallPool", "RecallRequest", "RecalledItem", "Scope", "fit", "gather"]
