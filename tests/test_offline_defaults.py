"""`import orrery` sets litellm's and tiktoken's offline defaults, so no entry point touches the network.

Outside `make` nothing else sets `LITELLM_LOCAL_MODEL_COST_MAP`: without it litellm fetches its price
map on import (with retries and WARNING lines), and tiktoken downloads its encodings. Each check runs in
a process with a clean environment whose HTTPS proxy is a closed port: any fetch would fail loudly.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NO_NETWORK = {
    "PATH": "/usr/bin:/bin",
    "HTTPS_PROXY": "http://127.0.0.1:9",
    "HTTP_PROXY": "http://127.0.0.1:9",
}
# the testing kit's entry point: what pytest imports first in a user's project
FIRST_USE = """
import orrery.testing.plugin
import litellm, tiktoken
print(len(litellm.model_cost) > 0, tiktoken.get_encoding("o200k_base").encode("hello") != [])
"""


def _python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    env = {**NO_NETWORK, "PYTHONPATH": f"{ROOT / 'backend'}:{ROOT}", **env}
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=ROOT, timeout=120
    )


def test_first_use_of_litellm_and_tiktoken_reads_local_copies() -> None:
    done = _python(FIRST_USE)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["True", "True"]
    assert "WARNING" not in done.stderr and "fetch" not in done.stderr.lower(), done.stderr


def test_an_operators_own_values_win() -> None:
    names = "'LITELLM_LOCAL_MODEL_COST_MAP', 'TIKTOKEN_CACHE_DIR'"
    code = f"import orrery, os; print(*(os.environ[v] for v in ({names})))"
    done = _python(code, LITELLM_LOCAL_MODEL_COST_MAP="False", TIKTOKEN_CACHE_DIR="/srv/encodings")
    assert done.stdout.split() == ["False", "/srv/encodings"], done.stderr
