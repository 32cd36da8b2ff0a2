"""The built wheel installs and works on its own: migrations and prompts ship inside it.

Builds the Orrery wheel and the example plugin's wheel from a copy of the source (no build
isolation, no network: the build backend is this venv's setuptools), installs them into a fresh
venv whose only other packages are this venv's dependencies (a `.pth` line, `pip --no-index`), and
runs `orrery db upgrade`, `orrery demo load`, `orrery embeddings status` (every demo message has its
vector from the embedder the wheel ships) and `orrery plugins` from it, outside the checkout (each
its own process, forked from a launcher in that venv). Then, in a user's project that has packages of
its own named `backend` and `tools` (the names Orrery's source folders carry in the checkout): the
wheel installed nothing by those names, `python -m pytest` runs the project's tests with Orrery's
testing kit loaded, and a plugin still importing `backend.*` is refused with the fix.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import venv
import zipfile
from pathlib import Path

from tests.support.entrypoint import Launcher

ROOT = Path(__file__).resolve().parents[1]
WHERE = (
    "import orrery, orrery.resources as r, orrery.memory.minilm as m; print(orrery.__file__); "
    "print(r.shipped_dir('alembic')); print(m.weights_dir())"
)
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
    with zipfile.ZipFile(wheels / built[0]) as wheel:
        tops = {name.split("/")[0] for name in wheel.namelist()}
    assert tops == {"orrery", "orrery-0.1.0.dist-info"}, tops  # no `backend`, no `tools`

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
    assert len(where) == 3 and all(line.startswith(site) for line in where), (
        where
    )  # installed, with its model
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
        embedded = json.loads(run("embeddings", "status", "--json"))  # the default embedder, from the wheel
        assert embedded["model"] == "all-MiniLM-L6-v2" and embedded["missing"] == 0 < embedded["current"]
        plugins = json.loads(run("plugins", "--json"))
    assert {p["name"] for p in plugins} >= {"decisions_first", "project_pulse", "retro"}
    assert not {"backend", "tools"} & {p.name for p in Path(site).iterdir()}
    _a_users_project_with_its_own_backend_and_tools(python, env, tmp_path / "project")


USERS_TEST = """
import orrery
from backend.app import NAME
from tools.search import search


def test_my_app_with_orrerys_kit(orrery_model):
    assert NAME == "mine" and search() == "my own tools"
    assert type(orrery_model).__name__ == "ScriptedModel" and orrery.__file__.startswith(SITE)
"""


def _a_users_project_with_its_own_backend_and_tools(python: str, env: dict[str, str], project: Path) -> None:
    """`python -m pytest` loads Orrery's pytest plugin beside the project's own `backend` and `tools`;
    `python -m orrery plugins` names the fix for a plugin written against the old `backend.*` names."""
    site = Path(python).parents[1]
    files = {
        "backend/__init__.py": "",
        "backend/app.py": 'NAME = "mine"\n',
        "tools/__init__.py": "",
        "tools/search.py": 'def search() -> str:\n    return "my own tools"\n',
        "tests/test_mine.py": f"SITE = {str(site)!r}\n" + textwrap.dedent(USERS_TEST),
        "pyproject.toml": '[tool.pytest.ini_options]\nasyncio_default_fixture_loop_scope = "function"\n',
        "old_plugin.py": "from backend.deps import TurnDeps\ntools = []\n",
    }
    for name, text in files.items():
        (project / name).parent.mkdir(parents=True, exist_ok=True)
        (project / name).write_text(text)
    # `orrery_model` exists only when the kit's plugin (entry point pytest11) loaded
    tested = _run([python, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=project, env=env)
    assert "1 passed" in tested.stdout
    old = {**env, "PYTHONPATH": str(project), "ORRERY_PLUGINS": "old_plugin"}
    refused = subprocess.run(
        [python, "-m", "orrery", "plugins"], capture_output=True, text=True, cwd=project, env=old, timeout=120
    )
    assert refused.returncode == 1, refused.stderr
    assert refused.stderr.splitlines() == [
        "error: plugin 'old_plugin' (ORRERY_PLUGINS) cannot be imported: No module named 'backend.deps' "
        "(Orrery's package is named orrery now: rename imports of backend.* to orrery.*, "
        "e.g. `from orrery.deps import ...`)"
    ]
