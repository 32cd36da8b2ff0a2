"""The durable background work a turn leaves behind, and the handlers any worker runs it with: the
person's learned summary (pattern analyst), a remote model's embeddings, a quiet chat's digest and an
abandoned client-tool suspension's expiry."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from orrery.agents.digest_writer import DigestJobs
from orrery.agents.patterns import queue_refresh, refresh_user_summary
from orrery.agents.suspensions import EXPIRE_JOB, expire_job
from orrery.agents.turn_models import TurnModels
from orrery.config import Settings
from orrery.db.engine import Database
from orrery.memory.digests import DIGEST_JOB
from orrery.memory.embedding_models import EmbeddingError, embedding_model
from orrery.memory.embedding_store import EMBED_JOB, run_embed_job
from orrery.ops.jobs import JobWorker
from orrery.repo.lineage import REFRESH_SUMMARY_JOB


class TurnJobs:
    """A process's job worker and what a finished turn queues on it."""

    def __init__(self, db: Database, settings: Settings, models: TurnModels) -> None:
        self.db = db
        self.settings = settings
        self.models = models
        self.embedding = embedding_model(settings)
        self.digests = DigestJobs(db, settings, lambda name, s: models.job_model(name))
        self.worker = JobWorker(
            db,
            settings,
            {
                REFRESH_SUMMARY_JOB: self._refresh_summary,
                EMBED_JOB: self._embed,
                DIGEST_JOB: self.digests.run,
                EXPIRE_JOB: lambda payload: expire_job(db, payload),
            },
            brief=(EmbeddingError,),  # the provider is down: its message says so, in one line
        )
        """Durable background work; the app starts its polling loop."""

    async def after_turn(
        self, user_id: uuid.UUID, sid: uuid.UUID, summarized: datetime | None, model: str | None
    ) -> None:
        """A stored reply's follow-ups: its vectors, the person's summary when due, the chat's digest
        once it is quiet (any worker runs each)."""
        self.embeddings_queued()
        if await queue_refresh(self.db, self.settings, user_id, summarized, model or self.settings.model):
            self.worker.wake()
        await self.digests.after_turn(user_id, sid)

    def embeddings_queued(self) -> None:
        """A remote model's vectors are computed by the job worker: have it look now."""
        if self.embedding.remote:
            self.worker.wake()

    async def _refresh_summary(self, payload: dict[str, Any]) -> None:
        model = self.models.job_model(payload.get("model") or self.settings.model)  # a forget queues none
        await refresh_user_summary(self.db, model, uuid.UUID(payload["user_id"]))

    async def _embed(self, payload: dict[str, Any]) -> None:
        await run_embed_job(self.db, self.embedding, payload)
