"""Operations endpoints: Prometheus `/metrics` and the caller's usage (`/v1/me/usage`)."""

from __future__ import annotations

from dataclasses import asdict
from typing import Annotated, Any

from fastapi import APIRouter, Query
from fastapi.responses import Response

from backend.api.deps import CurrentUser, SessionDep
from backend.api.errors import ERROR_RESPONSES
from backend.ops.metrics import exposition
from backend.repo.usage import usage_by_day

router = APIRouter()


@router.get("/metrics", tags=["operations"], summary="Prometheus metrics (all worker processes)")
async def metrics() -> Response:
    """Turns, latencies, tokens, tool calls, errors and jobs in the Prometheus text format (no
    authentication: keep it on an internal network or behind the proxy)."""
    body, content_type = exposition()
    return Response(body, media_type=content_type)


@router.get(
    "/v1/me/usage",
    tags=["identity"],
    summary="The caller's tokens and cost by day and agent",
    responses=ERROR_RESPONSES,
)
async def my_usage(
    user: CurrentUser, session: SessionDep, days: Annotated[int, Query(ge=1, le=366)] = 30
) -> dict[str, Any]:
    """Assistant replies of the last `days` UTC days, summed per day and agent, plus totals; cost is
    null for models without a price (the offline model)."""
    rows = await usage_by_day(session, user.id, days)
    costs = [r.cost_usd for r in rows if r.cost_usd is not None]
    return {
        "days": days,
        "usage": [{**asdict(r), "day": r.day.isoformat()} for r in rows],
        "total": {
            "turns": sum(r.turns for r in rows),
            "input_tokens": sum(r.input_tokens for r in rows),
            "output_tokens": sum(r.output_tokens for r in rows),
            "cost_usd": sum(costs) if costs else None,
        },
    }
