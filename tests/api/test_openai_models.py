"""Model ids on the OpenAI-compatible door, through the `openai` SDK: only ids `GET /v1/models` lists
are served (no near-misses), `GET /v1/models/{id}` answers the model object or OpenAI's 404 body."""

from __future__ import annotations

from typing import Any

import httpx
import openai
import pytest

from tests.api.live import LiveServer


async def test_near_miss_model_ids_are_openai_404s(live: LiveServer, demo: Any) -> None:
    client = openai.AsyncOpenAI(base_url=live.base_url, api_key=demo.api_key, max_retries=0)
    for model in ("orreryplanner", "orrery//coach", "orrery/coach/", "orrery/", "Orrery/coach"):
        with pytest.raises(openai.NotFoundError) as caught:
            await client.chat.completions.create(model=model, messages=[{"role": "user", "content": "x"}])
        assert caught.value.code == "model_not_found" and caught.value.param == "model", model
    listed = [m.id async for m in client.models.list()]
    assert "orrery" in listed and "orrery/coach" in listed
    for model_id in listed:
        card = await client.models.retrieve(model_id)
        assert (card.id, card.object, card.owned_by) == (model_id, "model", "orrery")
    with pytest.raises(openai.NotFoundError) as unknown:
        await client.models.retrieve("orrery/wizard")
    assert unknown.value.code == "model_not_found"


def test_unknown_model_body_is_openais(live: LiveServer, demo: Any) -> None:
    auth = {"Authorization": f"Bearer {demo.api_key}"}
    answer = httpx.get(f"{live.base_url}/models/gpt-4o", headers=auth)
    assert answer.status_code == 404
    error = answer.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}
    assert (error["type"], error["param"], error["code"]) == (
        "invalid_request_error",
        "model",
        "model_not_found",
    )
    assert httpx.get(f"{live.base_url}/models/orrery").json()["error"]["code"] == "invalid_api_key"
