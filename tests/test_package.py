"""The built wheel installs and works on its own: migrations and prompts ship inside it.

Builds the Orrery wheel and the example plugin's wheel from a copy of the source (no build
isolation, no network: the build backend is this venv's setuptools), installs them into a fresh
venv whose only other packages are this venv's dependencies (a `.pth` line, `pip --no-index`), and
runs `orrery db upgrade`, `orrery demo load` and `orrery plugins` from it, outside the checkout (each
its own process, forked from a launcher in that venv).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

from tests.support.entrypoint import Launcher

ROOT = Path(__file__).resolve().parents[1]
WHERE = "import orrery, orrery.resources as r; print(orrery.__file__); print(r.shipped_dir('alembic'))"
SKIP = shutil.ignore_patterns(
    ".venv",
    ".git",
    "__pycache__",
    "*.egg-info",
    "build",
    "dist",
    ".*_cache",
    "*.db",
    "*.db-*",
    "node_modules",
    "site",  # the docs build's output, written while `make test` runs this
)


def _run(args: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(args, capture_output=True, text=True, timeout=300, **kw)  # type: ignore[call-overload]
    assert done.returncode == 0, f"{' '.join(args)} failed:\n{done.stdout}\n{done.stderr}"
    return done  # type: ignore[no-any-return]


def test_wheel_installs_migrates_and_loads_the_demo(tmp_path: Path) -> None:
    source = tmp_path / "src"
    shutil.copytree(ROOT, source, ignore=SKIP)
    wheels = tmp_path / "wheels"
    pip = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index", "-q"]
    _run([*pip, "-w", str(wheels), str(source)])
    _run([*pip, "-w", str(wheels), str(source / "examples" / "orrery-plugin-example")])
    built = sorted(p.name for p in wheels.iterdir())
    assert (
        len(built) == 2 and built[0].startswith("orrery-0") and built[1].startswith("orrery_plugin_example")
    )

    fresh = tmp_path / "fresh"
    venv.EnvBuilder(with_pip=False).create(fresh)
    python = str(fresh / "bin" / "python")
    site = _run([python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]).stdout.strip()
    ours = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (Path(site) / "orrery-test-deps.pth").write_text("\n".join(sorted(ours)) + "\n")
    _run([python, "-m", "pip", "install", "-q", "--no-deps", "--no-index", *map(str, wheels.iterdir())])

    work = tmp_path / "elsewhere"
    work.mkdir()
    env = {
        "PATH": f"{fresh / 'bin'}:{os.environ.get('PATH', '')}",
        "DATABASE_URL": f"sqlite+aiosqlite:///{work / 'orrery.db'}",
        "ORRERY_SECRET_KEY": "wheel-test",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    }
    orrery = str(fresh / "bin" / "orrery")
    where = _run(
        [python, "-c", WHERE],
        cwd=work,
        env=env,
    ).stdout.split()
    assert all(line.startswith(site) for line in where), where  # the installed package, not the checkout
    # the installed console script, each command in its own process forked from a launcher running in
    # the fresh venv (it imports the installed `orrery.cli` first): four cold starts cost ~14 CPU-s
    with Launcher(orrery, env, work, python=python) as launcher:

        def run(*args: str) -> str:
            code, stdout, stderr = launcher.run_split(list(args))
            assert code == 0, f"orrery {' '.join(args)} failed:\n{stdout}\n{stderr}"
            return stdout

        assert "migrated" in run("db", "upgrade")
        demo = json.loads(run("demo", "load", "--json").strip().splitlines()[-1])
        assert demo["api_key"].startswith("orr_")
        assert "Atlas 2.0" in run("demo", "summary")
        plugins = json.loads(run("plugins", "--json"))
    assert {p["name"] for p in plugins} >= {"decisions_first", "project_pulse", "retro"}
