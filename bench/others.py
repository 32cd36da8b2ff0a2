"""Other people's messages beside the measured person (`--others N`), written in one statement per
table (`INSERT … SELECT` over `generate_series` on PostgreSQL, a recursive CTE on SQLite), so a
benchmark or test can put hundreds of thousands of rows on a server in seconds.

Their words are the same topics the measured person talks about (stemmed as stored), so every full-
text query of the person also matches other people's messages: the worst case for an index that does
not lead with the person. Each other person has `chats` chats of `per_chat` messages.
"""

from __future__ import annotations

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection

from orrery.text import analyze

WORDS = (  # noqa: SIM905
    "garden tomatoes watering roses compost shed fence soil seeds harvest greenhouse beans "
    "ferry harbour sailing island kayak tide lighthouse pier boat storm anchor "
    "budget invoice salary mortgage savings pension taxes receipt rent loan "
    "marathon training knee physio stretching running shoes intervals race hill "
    "piano lessons scales recital chords metronome teacher sheet music practice "
    "sister wedding cousin birthday niece grandmother visit recipe dinner flowers"
).split()


def _stems() -> str:
    """The topic words as the analyzer stores them, as an SQL array or list literal's items."""
    return ", ".join("'" + " ".join(analyze(w) or [w]) + "'" for w in WORDS)


def _pg(users: int, chats: int, per_chat: int) -> list[str]:
    per_user = chats * per_chat
    pick = f"(ARRAY[{_stems()}])"
    n = len(WORDS)
    return [
        f"""INSERT INTO users (id, email, display_name, recall_across_chats, recall_other_projects,
                created_at, updated_at)
            SELECT md5('other-user-' || u)::uuid, 'other-' || u || '@others.example', 'Other', true,
                false, now(), now() FROM generate_series(0, {users - 1}) u""",
        f"""INSERT INTO chat_sessions (id, user_id, title, message_count, history_epoch, remember,
                created_at, updated_at)
            SELECT md5('other-chat-' || c)::uuid, md5('other-user-' || (c / {chats}))::uuid,
                'chat ' || c, {per_chat}, 0, true, now(), now()
            FROM generate_series(0, {users * chats - 1}) c""",
        f"""INSERT INTO messages (id, session_id, seq, role, content, status, created_at, search_terms)
            SELECT md5('other-message-' || m)::uuid, md5('other-chat-' || (m / {per_chat}))::uuid,
                m % {per_chat} + 1, CASE WHEN m % 2 = 0 THEN 'user' ELSE 'assistant' END,
                'Note ' || m, 'complete', now(),
                {pick}[1 + m % {n}] || ' ' || {pick}[1 + (m * 7 + 3) % {n}] || ' '
                    || {pick}[1 + (m * 13 + 5) % {n}] || ' note'
            FROM generate_series(0, {users * per_user - 1}) m""",
    ]


def _sqlite(users: int, chats: int, per_chat: int) -> list[str]:
    n = len(WORDS)
    words = f"(SELECT json_array({_stems()}) AS w)"

    def series(last: int) -> str:
        return f"WITH RECURSIVE s(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM s WHERE i < {last}) "

    def pick(expr: str) -> str:
        return f"json_extract(w, '$[' || (({expr}) % {n}) || ']')"

    def ident(kind: int, expr: str) -> str:
        return f"printf('%08x%024x', {kind}, {expr})"

    return [
        series(users - 1)
        + f"""INSERT INTO users (id, email, display_name, recall_across_chats, recall_other_projects,
                created_at, updated_at)
            SELECT {ident(1, "i")}, 'other-' || i || '@others.example', 'Other', 1, 0,
                datetime('now'), datetime('now') FROM s""",
        series(users * chats - 1)
        + f"""INSERT INTO chat_sessions (id, user_id, title, message_count, history_epoch, remember,
                created_at, updated_at)
            SELECT {ident(2, "i")}, {ident(1, f"i / {chats}")}, 'chat ' || i, {per_chat}, 0, 1,
                datetime('now'), datetime('now') FROM s""",
        series(users * chats * per_chat - 1)
        + f"""INSERT INTO messages (id, session_id, seq, role, content, status, created_at, search_terms)
            SELECT {ident(3, "i")}, {ident(2, f"i / {per_chat}")}, i % {per_chat} + 1,
                CASE WHEN i % 2 = 0 THEN 'user' ELSE 'assistant' END, 'Note ' || i, 'complete',
                datetime('now'),
                {pick("i")} || ' ' || {pick("i * 7 + 3")} || ' ' || {pick("i * 13 + 5")} || ' note'
            FROM s, {words}""",
    ]


_GIN = ("ix_messages_session_search", "ix_messages_chat_terms")
BULK_BEGIN = [f"ALTER INDEX IF EXISTS {index} SET (fastupdate = on)" for index in _GIN]
"""A bulk load goes through the GIN indexes' pending lists (merged in sorted batches: 200,000
messages in ~9 s where writing each through took ~16 s)..."""
BULK_END = [
    *(
        f"SELECT gin_clean_pending_list(to_regclass('{index}')) WHERE to_regclass('{index}') IS NOT NULL"
        for index in _GIN
    ),
    *(f"ALTER INDEX IF EXISTS {index} SET (fastupdate = off)" for index in _GIN),
]
"""...which are then merged and switched off again, as the server runs (migration 0027ct)."""


async def add_others(conn: AsyncConnection, messages: int, chats: int = 10, per_chat: int = 100) -> int:
    """Write about `messages` other people's messages (whole people: `chats` × `per_chat` each);
    return how many were written. No `ANALYZE`: the caller decides whether the planner has seen them."""
    if messages <= 0:
        return 0
    users = max(1, round(messages / (chats * per_chat)))
    postgres = conn.dialect.name != "sqlite"
    build = _pg if postgres else _sqlite
    for statement in (
        (BULK_BEGIN if postgres else []) + build(users, chats, per_chat) + (BULK_END if postgres else [])
    ):
        await conn.execute(text(statement))
    return users * chats * per_chat


def load_others(url: str, messages: int) -> int:
    """`add_others` on the database at `url`, then `ANALYZE` (as a server that has run a while):
    for a benchmark that serves the database from another process."""
    import asyncio

    from sqlalchemy.ext.asyncio import create_async_engine

    async def run() -> int:
        engine = create_async_engine(url)
        try:
            async with engine.begin() as conn:
                written = await add_others(conn, messages)
            async with engine.connect() as conn:
                auto = await conn.execution_options(isolation_level="AUTOCOMMIT")
                await auto.execute(text("ANALYZE"))
            return written
        finally:
            await engine.dispose()

    return asyncio.run(run()) if messages > 0 else 0
