"""Settings, read once from the environment and an optional `.env` file.

Every field is listed with a comment in `.env.example`. `DATABASE_URL` picks the engine:
`sqlite+aiosqlite:///...` (embedded default) or `postgresql+asyncpg://...` (production).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import AliasChoices, Field, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

PLACEHOLDER_SECRET = "change-me-in-production"


class Settings(BaseSettings):
    """Runtime configuration for the API, the CLI and the tests."""

    model_config = SettingsConfigDict(
        env_prefix="ORRERY_",
        env_file=".env",
        env_file_encoding="utf-8",
        extra="ignore",
        populate_by_name=True,
    )

    env: Literal["development", "test", "production"] = "development"
    """Deployment mode; `production` refuses placeholder secrets."""

    database_url: str = Field(
        default="sqlite+aiosqlite:///./orrery.db",
        validation_alias=AliasChoices("DATABASE_URL", "ORRERY_DATABASE_URL"),
    )
    """SQLAlchemy async URL: SQLite (aiosqlite) or PostgreSQL (asyncpg)."""

    db_echo: bool = False
    """Log every SQL statement (debugging only)."""

    db_pool_size: int = Field(default=20, ge=1, le=200)
    """Connection pool size per process (kept open once opened: at 50 concurrent chats a pool of
    10 plus 10 overflow opened and closed 100-150 connections, each a PostgreSQL backend, in a few
    seconds)."""

    db_max_overflow: int = Field(default=0, ge=0, le=200)
    """Connections opened beyond the pool under bursts, per process (closed when returned)."""

    db_pool_timeout_seconds: float = Field(default=10.0, gt=0)
    """How long a request waits for a pooled connection before it is answered 503 with `Retry-After`."""

    retry_after_seconds: int = Field(default=2, ge=1)
    """The `Retry-After` a 503 (pool exhausted, database busy or unreachable) tells clients."""

    turn_wait_seconds: float = Field(default=120.0, gt=0)
    """How long a turn waits for the turn already running on its session (then 503)."""

    client_tool_timeout_seconds: int = Field(default=3600, ge=1)
    """How long a turn suspended on the caller's tool calls (OpenAI doors) waits for their results;
    later it is abandoned: its message is marked failed in the chat and a late result is a 400."""

    sqlite_busy_timeout_ms: int = Field(default=5000, ge=0)
    """How long a SQLite writer waits for a lock before failing."""

    sqlite_driver: Literal["inline", "aiosqlite"] = "inline"
    """How SQLite is driven: `inline` runs its calls on the event loop (a busy lock is waited for with
    `asyncio.sleep`), `aiosqlite` on a thread per connection (~0.5 ms of CPU more per statement)."""

    secret_key: str = PLACEHOLDER_SECRET
    """Server secret mixed into API-key hashes; changing it invalidates every key."""

    host: str = "127.0.0.1"
    """Interface `orrery serve` binds to."""

    port: int = Field(default=8000, ge=1, le=65535)
    """Port `orrery serve` listens on."""

    max_body_bytes: int = Field(default=1_000_000, ge=1024)
    """Largest HTTP request body the API accepts; bigger bodies answer 413."""

    cors_origins: str = ""
    """Comma-separated browser origins allowed by CORS (`*` for any); empty turns CORS off."""

    log_level: Literal["debug", "info", "warning", "error"] = "info"
    """Log level for the server and CLI."""

    model: str = "offline"
    """The chat model: `offline` (deterministic, no key) or any litellm model id."""

    litellm_api_base: str | None = Field(default=None, validation_alias=AliasChoices("LITELLM_API_BASE"))
    """A litellm proxy's URL; when set, models go through it (OpenAI-compatible) instead of in-process."""

    litellm_api_key: str | None = Field(default=None, validation_alias=AliasChoices("LITELLM_API_KEY"))
    """The key for the litellm proxy, if it needs one."""

    model_client: Literal["auto", "litellm"] = "auto"
    """`auto`: an OpenAI-protocol provider (`openai/...`) is called by Orrery's direct client (except
    the OpenAI models whose requests litellm rewrites: the o-series, gpt-5.4 and later), every other
    provider through litellm; `litellm`: every model through litellm."""

    pattern_refresh_minutes: float = Field(default=10, ge=0)
    """After a reply, the pattern analyst refreshes the person's summary in the background when it
    was last refreshed longer ago than this (or never), once however many sessions are talking
    (0 turns it off)."""

    model_fallbacks: str = ""
    """Comma-separated litellm model ids tried in order when the main model fails."""

    model_timeout_seconds: float = Field(default=60.0, gt=0)
    """How long one model attempt may take (each fallback gets its own); the turn has no overall cap."""

    context_window: int | None = Field(default=None, ge=1024)
    """The model's context window in tokens; looked up from the model id when unset."""

    budget_system: int = Field(default=800, ge=0)
    """Token budget of the agent's base prompt, for a 8,192-token window (scaled to the model's)."""

    budget_profile: int = Field(default=300, ge=0)
    """Token budget of the user section: profile, goals, what we know, engagement."""

    budget_expertise: int = Field(default=1500, ge=0)
    """Token budget of the agent's expertise modules."""

    budget_focus: int = Field(default=1000, ge=0)
    """Token budget of the focus entity / location section."""

    budget_related: int = Field(default=700, ge=0)
    """Token budget of related data: the linked entities (never above 500 tokens, plus the relationship
    guide counted apart, so 3 per type fit) and caller sections."""

    budget_knowledge: int = Field(default=600, ge=0)
    """Token budget of the knowledge packet auto-context loads (its own, not shared with linked entities)."""

    budget_conversation: int = Field(default=2500, ge=0)
    """Token budget of the scoped conversation messages."""

    budget_earlier_chats: int = Field(default=2000, ge=0)
    """The cap on messages recalled from the person's earlier chats: they share the conversation budget
    and get what the chat's own messages leave, up to this many tokens (scaled like the others)."""

    budget_facts: int = Field(default=250, ge=0)
    """Token budget of the remembered facts, part of the profile section of the prompt."""

    budget_search_memory: int = Field(default=800, ge=50)
    """Token budget of one `search_memory` result (the model's on-demand search of earlier chats):
    the excerpts it returns, whole, best first; not scaled by the model's window."""
    budget_instructions: int = Field(default=600, ge=0)
    """Token budget of the person's standing instructions and preferences (their own part of the
    prompt); over it, the most relevant to the message and the newest are kept."""
    budget_timeline: int = Field(default=800, ge=0)
    """Token budget of the "Earlier chats" timeline (one dated line per earlier chat, newest first,
    older ones folded per period); 0 turns it off."""

    budget_caller: int = Field(default=800, ge=0)
    """Token budget of the caller's instructions: the system/developer messages and `instructions` an
    application sends through the OpenAI doors, and the reply format it asked for (quoted as data)."""

    caller_sampling: bool = True
    """Pass an OpenAI-door caller's `temperature`, `top_p`, `stop` and `seed` to the model; off: they
    are accepted and not used (`max_tokens` stays capped by `caller_max_output_tokens`)."""

    caller_max_output_tokens: int = Field(default=4096, ge=1)
    """The most output tokens a caller's `max_tokens` / `max_output_tokens` may ask for (a larger
    value is lowered to this)."""

    digest_quiet_minutes: float = Field(default=30, ge=0)
    """A chat's digest (its line in the timeline) is built in the background once the chat has had
    no new message for this long; it is rebuilt when the chat changes after that."""

    engagement_threshold_days: int = Field(default=3, ge=0)
    """A user whose last check-in is at most this many days old is `engaged`, else `returning`."""

    scoping_strategy: str | None = None
    """Message-scoping strategy for every agent unless the session or `agent_strategies` names one;
    unset: each agent's own default (`relevance` for the built-ins: their last N messages plus the
    older ones most related to the current message)."""

    agent_strategies: dict[str, str] = Field(default_factory=dict)
    """Per-agent strategy names, as JSON: `{"planner": "relevance"}`; a session's choice wins."""

    summary_keep_recent: int = Field(default=6, ge=1)
    """`summary` strategy: how many newest messages stay verbatim beside the running summary."""

    relevance_recent_window: int | None = Field(default=None, ge=0)
    """`relevance` strategy: how many newest messages stay verbatim before older ones are recalled
    (unset: each agent's own `max_messages`, as `last_n` keeps)."""

    embedding_model: str = "local"
    """Embeddings for `relevance`: `local` (the bundled all-MiniLM-L6-v2, offline, computed as a
    message is written) or a litellm embedding model id (`openai/text-embedding-3-small`), whose
    vectors a background job computes; `orrery embeddings reembed` backfills after a switch."""

    embedding_api_base: str | None = None
    """Base URL of a remote embedding model's OpenAI-compatible API (unset: litellm's provider default)."""

    embedding_api_key: str | None = None
    """Key for the remote embedding model (unset: litellm reads the provider's own, e.g. `OPENAI_API_KEY`)."""

    embedding_query_timeout_seconds: float = Field(default=2.0, gt=0)
    """How long a turn waits for a remote model to embed its query before ranking lexically."""

    embedding_batch_timeout_seconds: float = Field(default=30.0, gt=0)
    """How long the background job or `orrery embeddings reembed` waits for one batch of vectors."""

    linked_cache_ttl_seconds: float = Field(default=60.0, ge=0)
    """How long linked-entity context stays cached per entity (0 disables); graph writes in any
    process invalidate it (version stamps checked on read)."""

    linked_cache_size: int = Field(default=4096, ge=1)
    """How many entities' linked context one process caches at most (least recently used go first)."""

    history_scan_limit: int = Field(default=2000, ge=10)
    """Most messages a strategy reads back from one session in one turn."""

    history_cache_mb: float = Field(default=128.0, ge=0)
    """MB of recent sessions' messages (text, vectors, index) one worker keeps between turns for
    `relevance` and recall (a turn then reads only the new ones; the least recently used go first;
    0 keeps none). Size it from `orrery_history_cache_bytes` and the eviction rate
    (docs/operations/workers.md)."""

    plugins: str = ""
    """Comma-separated modules contributing strategies, tools, agents and expertise (besides the
    `orrery.*` entry points of installed packages), e.g. `my_pkg.orrery`."""

    # Operations: tracing, metrics, logs, limits, background jobs (backend/orrery/ops/).
    otel_exporter_otlp_endpoint: str | None = Field(
        default=None, validation_alias=AliasChoices("OTEL_EXPORTER_OTLP_ENDPOINT")
    )
    """OTLP/HTTP collector base URL (e.g. `http://localhost:4318`); tracing is off when unset."""

    otel_service_name: str = Field(default="orrery", validation_alias=AliasChoices("OTEL_SERVICE_NAME"))
    """The `service.name` traces are reported under."""

    trace_sql: bool = False
    """A span per SQL statement in traces (`db.query.text`, the statement without its values). Off by
    default: a turn runs a dozen statements, which would be most of its spans."""

    trace_content: bool = False
    """Export prompts, completions and tool arguments in traces. Off by default: the system prompt
    holds the user's profile and the conversation, which a trace collector should not receive."""

    prometheus_multiproc_dir: str | None = Field(
        default=None, validation_alias=AliasChoices("PROMETHEUS_MULTIPROC_DIR")
    )
    """Directory where worker processes share metrics; `orrery serve --workers N` makes one if unset."""

    log_format: Literal["text", "json"] = "text"
    """`json`: one JSON object per log line (with the request id), for log shippers."""

    limit_turns_per_minute: int = Field(default=0, ge=0)
    """Most turns one user may start per minute, across all workers (0: no limit)."""

    limit_tokens_per_day: int = Field(default=0, ge=0)
    """Most model tokens (in + out) one user may use per UTC day, across all workers (0: no limit)."""

    jobs_poll_seconds: float = Field(default=2.0, gt=0)
    """How often an idle background-job worker looks for due jobs."""

    jobs_lease_seconds: float = Field(default=300.0, gt=0)
    """How long a claimed job is reserved; a job still `running` after it (worker died) runs again."""

    jobs_max_attempts: int = Field(default=5, ge=1)
    """Attempts before a failing job is marked `failed` (retries back off exponentially)."""

    templates_dir: Path | None = None
    """A folder of your own build_context templates (`*.yaml`), beside the shipped ones (yours win)."""

    docs_dir: Path | None = None
    """The docs folder `index_docs` indexes for a project that has no index yet: `<dir>/<project id>/`
    when that exists, else the folder itself."""

    @model_validator(mode="after")
    def _refuse_placeholder_secret(self) -> Settings:
        if self.env == "production" and self.secret_key == PLACEHOLDER_SECRET:
            raise ValueError("ORRERY_SECRET_KEY must be set to a real secret when ORRERY_ENV=production")
        return self

    @property
    def dialect(self) -> str:
        """`sqlite` or `postgresql`, from the URL scheme."""
        return self.database_url.split(":", 1)[0].split("+", 1)[0]


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings (cached; tests build their own `Settings`)."""
    return Settings()
