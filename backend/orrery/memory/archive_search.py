"""Full-text search of a long chat's messages older than its window, in one statement whose cost is
bounded by what the turn takes, not by the chat's length (issue 53).

A question's words are not all alike: a rare word's matches are few and each one counts, a common
word's matches are many and each barely counts (BM25's inverse document frequency). Reading every
match of every word made a turn in a 6,000-message chat cost 3x one in a 10-message chat, because a
chat's recurring words ("garden", the project's name) match thousands of its messages. So:

- each word's share of the older messages is estimated from the window the process already holds
  (its newest `history_scan_limit` messages; no query), and the rarest words, while their expected
  matches fit `RARE_ROWS` per candidate, are looked up through `messages.chat_terms` (0027ct),
  whose GIN index holds each term under its chat's key: every match, and only this chat's;
- the common words are matched among the older messages newest first, by the `(session_id, seq)`
  index, until twice the candidates wanted are found or `NEWEST_ROWS` per candidate were read:
  their matches score alike, and ties go to the newer anyway.

Both parts have a cap written into the statement, so an estimate that was wrong (a word absent
from the window but frequent long ago) reads more rows only up to the cap. BM25 then ranks what was
read with the chat's statistics: a rare word's document frequency counted from its matches, a
common word's estimated from the window. SQLite keeps its FTS5 query, which ranks inside the index.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from sqlalchemy import Float, Integer, func, literal_column, select, text, union_all
from sqlalchemy.ext.asyncio import AsyncSession

from orrery.db.models import Message
from orrery.text import bm25_scores

RARE_ROWS = 10
"""Per candidate asked for: the expected matches of the words looked up through the index."""
NEWEST_ROWS = 10
"""Per candidate asked for: the older messages, newest first, that common words are matched in."""
_LIVE = Message.superseded_at.is_(None)


def split_terms(
    terms: Sequence[str], rates: Mapping[str, float], older: int, limit: int
) -> tuple[list[str], list[str]]:
    """(rare, common): the words whose expected matches among `older` messages, rarest first, add up
    to at most `RARE_ROWS * limit`, and the rest. A word the window never holds counts as rare."""
    budget: float = RARE_ROWS * limit
    rare: list[str] = []
    common: list[str] = []
    for term in sorted(terms, key=lambda t: rates.get(t, 0.0)):
        expected = rates.get(term, 0.0) * older
        if expected <= budget:
            rare.append(term)
            budget -= expected
        else:
            common.append(term)
    return rare, common


KEY_DIGITS = 12
"""Hex digits of a chat's id written before each of its terms in `messages.chat_terms` (0027ct)."""


def chat_key(session_id: uuid.UUID) -> str:
    """What `messages.chat_terms` puts before each of this chat's terms (0027ct)."""
    return session_id.hex[:KEY_DIGITS]


def _inline(n: int) -> Any:
    """A row cap written into the statement: a generic plan guesses a bound `LIMIT` at a tenth of the
    rows, which made a sequential scan look cheaper than the index."""
    return literal_column(str(int(n)))


def _tsquery(terms: Sequence[str]) -> Any:
    """The query once per statement (a scalar subquery: a generic plan would otherwise parse it again
    for every row it filters)."""
    return select(func.to_tsquery(literal_column("'simple'::regconfig"), " | ".join(terms))).scalar_subquery()


def _postgres_query(session_id: uuid.UUID, end: int, rare: list[str], common: list[str], limit: int) -> Any:
    """One statement. The rare words' matches come by `chat_terms`, whose index holds each term
    under the chat's key: exactly this chat's messages holding them, in a materialized CTE so that
    its cap stops the scan without making the planner prefer another path. The common words' come
    from the newest older messages by the seq index (`coalesce(...)`: an expression no full-text
    index can serve)."""
    parts = []
    if rare:
        key = chat_key(session_id)
        keyed: Any = literal_column("messages.chat_terms")
        found = (
            select(Message.seq, Message.search_terms, Message.session_id, Message.superseded_at)
            # the window's own matches never count against the cap (`+ 0`: no index range on seq)
            .where(keyed.op("@@")(_tsquery([key + t for t in rare])), Message.seq + 0 < end)
            .limit(_inline(2 * RARE_ROWS * limit))
            .cte("rare")
            .prefix_with("MATERIALIZED")
        )
        parts.append(
            select(found.c.seq, found.c.search_terms).where(
                found.c.session_id == session_id, found.c.superseded_at.is_(None)
            )
        )
    if common:
        vector: Any = func.coalesce(literal_column("messages.search_vector"), literal_column("''::tsvector"))
        parts.append(
            select(Message.seq, Message.search_terms)
            .where(
                Message.session_id == session_id,
                Message.seq < end,
                Message.seq >= end - NEWEST_ROWS * limit,
                _LIVE,
                vector.op("@@")(_tsquery(common)),
            )
            .order_by(Message.seq.desc())
            .limit(_inline(2 * limit))
        )
    return parts[0] if len(parts) == 1 else union_all(*parts)


async def search_postgres(
    session: AsyncSession,
    session_id: uuid.UUID,
    terms: list[str],
    limit: int,
    end: int,
    rates: Mapping[str, float] | None,
) -> list[int]:
    """Seqs below `end` best first (see the module docstring); without `rates`, every word is rare."""
    older = max(end - 1, 0)
    rare, common = split_terms(terms, rates or {}, older, limit)
    connection = await session.connection()
    rows = (await connection.execute(_postgres_query(session_id, end, rare, common, limit))).all()
    matches = list({int(seq): terms_text for seq, terms_text in rows}.items())
    if not matches:
        return []
    docs = [(terms_text or "").split() for _, terms_text in matches]
    freq = {t: sum(1 for d in docs if t in d) for t in terms}
    for term in common:
        freq[term] = max(freq[term], round((rates or {}).get(term, 0.0) * older))
    avg_len = sum(len(d) for d in docs) / len(docs) or 1.0
    scores = bm25_scores(terms, docs, corpus=(max(older, len(docs)), avg_len, freq))
    order = sorted(range(len(matches)), key=lambda i: (-scores[i], -matches[i][0]))
    return [matches[i][0] for i in order[:limit]]


def sqlite_query(session_id_hex: str, terms: list[str], limit: int, end: int, session_id: Any) -> Any:
    """FTS5's own BM25 over the chat's postings (`session_id` is a column of the index)."""
    fts = (
        text(
            "SELECT rowid AS rid, bm25(messages_fts, 1.0, 0.0) AS score FROM messages_fts "
            "WHERE messages_fts MATCH :q"
        )
        .bindparams(q=f'session_id : "{session_id_hex}" AND search_terms : ({" OR ".join(terms)})')
        .columns(rid=Integer, score=Float)
        .subquery()
    )
    return (
        select(Message.seq)
        .join(fts, literal_column("messages.rowid") == fts.c.rid)
        .where(Message.session_id == session_id, Message.seq < end, _LIVE)
        .order_by(fts.c.score, Message.seq.desc())
        .limit(limit)
    )
