"""The code of the getting-started and extending pages, run as written.

The plugin example's files (blocks opening with `# <path>`) go into an empty folder and `pytest` runs
there, as a developer would after copy-pasting them. A standalone Python block is imported in a fresh
interpreter, and each strategy it defines passes the testing kit's conformance check. A block that
opens with `# fragment` is a piece of a larger program: it is compiled and its imports are run.
"""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = [DOCS / "getting-started.md", *sorted((DOCS / "extending").glob("*.md"))]
BLOCK = re.compile(r"^```(python|toml)\n(.*?)^```", re.S | re.M)
FILE_HEADER = re.compile(r"# (\S+/\S+|\S+\.(?:py|toml))\n")
PROJECT_SECTION = "## A strategy in your own package, tested with a mocked LLM"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ORRERY_", "DATABASE_URL", "PYTEST_"))}
    env.update(LITELLM_LOCAL_MODEL_COST_MAP="True", **extra)
    return env


def _blocks() -> list[tuple[Path, str, str]]:
    """(page, language, body) of every Python and TOML block of the pages."""
    return [(page, lang, body) for page in PAGES for lang, body in BLOCK.findall(page.read_text())]


def _project_files() -> dict[str, str]:
    text = (DOCS / "extending" / "plugins.md").read_text()
    section = text[text.index(PROJECT_SECTION) :]
    found = {}
    for _, body in BLOCK.findall(section):
        header = FILE_HEADER.match(body)
        if header:
            found[header.group(1)] = body
    return found


def _run(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def test_every_block_is_run_by_this_file() -> None:
    kinds = {"file": 0, "module": 0, "fragment": 0}
    for page, lang, body in _blocks():
        if FILE_HEADER.match(body):
            kinds["file"] += 1
        elif body.startswith("# fragment"):
            kinds["fragment"] += 1
        else:
            assert lang == "python", f"{page.name}: a {lang} block that is not a file of the example"
            kinds["module"] += 1
    assert kinds["file"] == len(_project_files()) == 3
    assert kinds["module"] >= 1


def test_the_plugin_example_runs_as_written(tmp_path: Path) -> None:
    files = _project_files()
    assert set(files) == {"my_orrery_plugin/__init__.py", "pyproject.toml", "tests/test_user_turns.py"}
    for path, body in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(body)
    env = _env(ORRERY_PLUGINS="my_orrery_plugin", PYTHONPATH=str(tmp_path))
    done = _run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"], tmp_path, env)
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert "2 passed" in done.stdout


CONFORMANCE = """
import asyncio, inspect, example
from orrery.testing import run_strategy_conformance
found = [c for _, c in inspect.getmembers(example, inspect.isclass)
         if c.__module__ == "example" and hasattr(c, "select") and hasattr(c, "name")]
for cls in found:
    asyncio.run(run_strategy_conformance(cls))
print("strategies checked:", len(found))
"""


def test_standalone_blocks_import_and_their_strategies_conform(tmp_path: Path) -> None:
    modules = [b for _, lang, b in _blocks() if lang == "python" and not FILE_HEADER.match(b)]
    for body in [b for b in modules if not b.startswith("# fragment")]:
        (tmp_path / "example.py").write_text(body)
        done = _run([sys.executable, "-c", CONFORMANCE], tmp_path, _env(PYTHONPATH=str(tmp_path)))
        assert done.returncode == 0, body[:200] + "\n" + done.stdout[-3000:] + done.stderr[-3000:]
        assert "strategies checked:" in done.stdout


def test_fragments_compile_and_their_imports_run(tmp_path: Path) -> None:
    for _, _, body in _blocks():
        if not body.startswith("# fragment"):
            continue
        tree = compile(body, "<fragment>", "exec", flags=ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        imports = [ast.unparse(n) for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
        assert imports, "a fragment shows where its names come from"
        done = _run([sys.executable, "-c", "\n".join(imports)], tmp_path, _env())
        assert done.returncode == 0, done.stderr[-2000:]
