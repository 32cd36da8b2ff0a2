"""The README's "Build on Orrery" example, run as written: its files go into an empty folder and
`pytest` runs there, as a developer would after copy-pasting them."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BLOCK = re.compile(r"```(?:python|toml)\n# (\S+)\n(.*?)```", re.S)


def _example_files() -> dict[str, str]:
    text = (ROOT / "README.md").read_text()
    start = text.index("## Build on Orrery")
    section = text[start : text.index("\n## ", start + 1)]
    return {path: body for path, body in BLOCK.findall(section)}


def test_readme_example_runs_as_written(tmp_path: Path) -> None:
    files = _example_files()
    assert set(files) == {"my_orrery_plugin/__init__.py", "pyproject.toml", "tests/test_user_turns.py"}
    for path, body in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(body)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ORRERY_", "DATABASE_URL", "PYTEST_"))}
    env.update(
        ORRERY_PLUGINS="my_orrery_plugin", PYTHONPATH=str(tmp_path), LITELLM_LOCAL_MODEL_COST_MAP="True"
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "2 passed" in done.stdout
