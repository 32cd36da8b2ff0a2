"""How long `/health` stalls while the first turn on a real (litellm) model loads the provider.

Each mode runs in a fresh interpreter (litellm not yet imported) on a throwaway SQLite database:
the server runs with `ORRERY_MODEL=openai/gpt-4o-mini` against a closed loopback port (the turn
fails fast after the import; no network, no key), one client sends the first turn while another
polls `/health` every 20 ms. `startup` is the shipped behaviour (the provider is imported in a
worker thread before the server accepts requests); `on-loop` disables that, so the import happens
inside the first request, as before the fix.

Run `python -m bench.first_turn`.
"""

from __future__ import annotations

import json
import subprocess
import sys

CHILD = r"""
import asyncio, json, os, socket, sys, tempfile, threading, time
from pathlib import Path
import httpx, uvicorn
os.environ["OPENAI_API_KEY"] = "sk-bench"
os.environ["OPENAI_API_BASE"] = "http://127.0.0.1:9/v1"
import orrery.agents.preload as preload
if sys.argv[1] == "on-loop":
    async def _nothing(model, settings):
        return None
    preload.preload_provider = _nothing
    import orrery.agents.orchestrator as orchestrator
    orchestrator.preload_provider = _nothing
    import orrery.app.http as app_module
    app_module.preload_provider = _nothing
from orrery.app.http import create_app
from orrery.db.engine import Database
from orrery.demo.workspace import load_demo
from bench.common import bench_settings, fresh_url

tmp = Path(tempfile.mkdtemp())
url = fresh_url("sqlite", "first_turn", tmp, None)
settings = bench_settings(url).model_copy(update={"model": "openai/gpt-4o-mini", "model_timeout_seconds": 30})

async def demo():
    db = Database.from_settings(settings)
    try:
        return await load_demo(db, settings.secret_key)
    finally:
        await db.dispose()

workspace = asyncio.run(demo())
with socket.socket() as s:
    s.bind(("127.0.0.1", 0)); port = s.getsockname()[1]
server = uvicorn.Server(uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="error"))
threading.Thread(target=server.run, daemon=True).start()
while not server.started:
    time.sleep(0.02)
base, headers = f"http://127.0.0.1:{port}", {"Authorization": f"Bearer {workspace.api_key}"}

async def main():
    async with httpx.AsyncClient(base_url=base, headers=headers, timeout=120) as http:
        sid = (await http.post("/v1/sessions", json={"project_id": str(workspace.project_id)})).json()["id"]
        done, stalls = asyncio.Event(), []
        async def poll():
            while not done.is_set():
                started = time.perf_counter()
                await http.get("/health")
                stalls.append(time.perf_counter() - started)
                await asyncio.sleep(0.02)
        poller = asyncio.create_task(poll())
        started = time.perf_counter()
        body, accept = {"content": "plan my week"}, {"Accept": "application/json"}
        await http.post(f"/v1/sessions/{sid}/messages", json=body, headers=accept)
        turn = time.perf_counter() - started
        done.set(); await poller
        print(json.dumps({"turn_s": turn, "health_max_ms": max(stalls) * 1000, "health_polls": len(stalls)}))

asyncio.run(main())
server.should_exit = True
"""


def main(argv: list[str]) -> None:
    """Print the first turn's duration and the longest `/health` answer during it, per mode."""
    print("| mode | first turn (s) | longest /health during it (ms) | /health polls |")
    print("|---|---|---|---|")
    for mode in ("on-loop", "startup"):
        out = subprocess.run([sys.executable, "-c", CHILD, mode], capture_output=True, text=True, check=True)
        row = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"| {mode} | {row['turn_s']:.1f} | {row['health_max_ms']:.0f} | {row['health_polls']} |")


if __name__ == "__main__":
    main(sys.argv[1:])
