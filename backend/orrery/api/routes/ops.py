"""Operations endpoints: Prometheus `/metrics` and the caller's usage (`/v1/me/usage`)."""

from __future__ import annotations

from dataclasses import asdict
from datetime import date
from typing import Annotated

from fastapi import APIRouter, Header, Query
from fastapi.responses import Response
from pydantic import BaseModel, Field

from orrery.api.errors import ERROR_RESPONSES
from orrery.ops.metrics import exposition
from orrery.repo.usage import usage_by_day
from orrery.services.deps import CurrentUser, ReadSessionDep

router = APIRouter()


class UsageRowOut(BaseModel):
    """One UTC day and agent."""

    day: date
    agent: str | None
    turns: int = Field(description="Assistant replies")
    input_tokens: int
    output_tokens: int
    cost_usd: float | None = Field(description="Sum over priced replies; null when none had a price")


class UsageTotalOut(BaseModel):
    """The whole period."""

    turns: int
    input_tokens: int
    output_tokens: int
    cost_usd: float | None


class UsageOut(BaseModel):
    """The caller's usage, newest day first."""

    days: int
    usage: list[UsageRowOut]
    total: UsageTotalOut


@router.get("/metrics", tags=["operations"], include_in_schema=False)
async def metrics(accept: Annotated[str, Header()] = "") -> Response:
    """Turns, latencies, tokens, tool calls, errors and jobs, for every worker process, in the
    Prometheus text format or OpenMetrics (`Accept: application/openmetrics-text`) (no
    authentication: keep it on an internal network or behind the proxy)."""
    body, content_type = exposition(accept)
    return Response(body, media_type=content_type)


@router.get(
    "/v1/me/usage",
    tags=["identity"],
    summary="The caller's tokens and cost by day and agent",
    response_model=UsageOut,
    responses=ERROR_RESPONSES,
)
async def my_usage(
    user: CurrentUser, session: ReadSessionDep, days: Annotated[int, Query(ge=1, le=366)] = 30
) -> UsageOut:
    """Assistant replies of the last `days` UTC days, summed per day and agent, plus totals; cost is
    null for models without a price (the offline model)."""
    rows = await usage_by_day(session, user.id, days)
    costs = [r.cost_usd for r in rows if r.cost_usd is not None]
    return UsageOut(
        days=days,
        usage=[UsageRowOut(**asdict(r)) for r in rows],
        total=UsageTotalOut(
            turns=sum(r.turns for r in rows),
            input_tokens=sum(r.input_tokens for r in rows),
            output_tokens=sum(r.output_tokens for r in rows),
            cost_usd=sum(costs) if costs else None,
        ),
    )
