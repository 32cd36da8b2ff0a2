"""Every command and flag the README and the docs site show, run through the installed `orrery` entry point.

The other CLI tests call the Typer app in-process; these start the real console script in a
subprocess (fresh SQLite file, no `.env`), the way a user runs it, so wiring mistakes such as a
documented flag that no command accepts fail here. A README check keeps the two in step: every
`orrery ...` flag in the README or in docs/ must appear in `STEPS` or `SERVER_STEPS` below.
"""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.support.entrypoint import Commands, Forked, server_launcher

ROOT = Path(__file__).resolve().parents[1]
ORRERY = str(Path(sys.executable).with_name("orrery"))
DEMO_DOCS = str(ROOT / "backend" / "orrery" / "demo" / "docs")

# (argv with {placeholders}, expected exit code, text the output must contain, name to capture JSON as)
Step = tuple[list[str], int, str, str | None]
STEPS: list[Step] = [
    (["--help"], 0, "Commands", None),
    (["db", "current"], 1, "needs `orrery db upgrade`", None),
    (["demo", "summary"], 1, "orrery db upgrade", None),
    (["db", "upgrade"], 0, "database migrated to head", None),
    (["db", "downgrade", "base"], 0, "downgraded to base", None),
    (["db", "upgrade", "head"], 0, "database migrated to head", None),
    (["db", "current"], 0, "up to date", None),
    (["plugins"], 0, "decisions_first", None),
    (["plugins", "--json"], 0, '"project_pulse"', None),
    (["demo", "load", "--json"], 0, "api_key", "demo"),
    (["demo", "load", "--if-empty"], 0, "demo not loaded", None),
    (["demo", "summary"], 0, "Atlas 2.0", None),
    (["demo", "summary", "--email", "maya@demo.orrery.dev"], 0, "Maya Chen", None),
    (["users", "create", "sam@example.org", "--name", "Sam", "--project", "Thesis"], 0, "orr_", None),
    (["users", "key", "sam@example.org", "--name", "laptop"], 0, "orr_", None),
    (["keys", "create", "sam@example.org", "--name", "ci"], 0, "orr_", None),
    (["keys", "list", "sam@example.org"], 0, "laptop", None),
    (["keys", "revoke", "sam@example.org", "--name", "ci"], 0, "revoked", None),
    (["keys", "revoke", "nobody@example.org"], 1, "not found", None),
    (
        [
            "sessions",
            "create",
            "--user",
            "maya@demo.orrery.dev",
            "--project",
            "{project_id}",
            "--focus",
            "task:{task}",
            "--agent",
            "planner",
            "--strategy",
            "relevance",
            "--title",
            "Pricing",
            "--json",
        ],
        0,
        "planner",
        "session",
    ),  # fmt: skip
    (["sessions", "create", "--user", "maya@demo.orrery.dev", "--focus", "task"], 2, "KIND:ID", None),
    (["sessions", "say", "--session", "{session_id}", "When is the legal review due?"], 0, "appended", None),
    (
        [
            "sessions",
            "say",
            "--session",
            "{session_id}",
            "--role",
            "assistant",
            "--agent",
            "planner",
            "Soon.",
        ],
        0,
        "appended",
        None,
    ),  # fmt: skip
    (["context", "show", "--session", "{session_id}"], 0, "legal review", None),
    (
        [
            "context",
            "show",
            "--session",
            "{session_id}",
            "--agent",
            "coach",
            "--strategy",
            "token_budget",
            "--base-prompt",
            "You are a careful planner.",
            "--json",
        ],
        0,
        "receipt",
        None,
    ),  # fmt: skip
    (["linked", "{task}"], 0, "Finalize pricing page", None),
    (["linked", "{task}", "--filter", "task", "--user", "maya@demo.orrery.dev", "--json"], 0, "task", None),
    (["context", "templates"], 0, "task-deep-dive", None),
    (
        [
            "context",
            "build",
            "{task}",
            "--budget",
            "800",
            "--strategy",
            "breadth",
            "--format",
            "outline",
            "--query",
            "pricing",
        ],
        0,
        "",
        None,
    ),  # fmt: skip
    (["context", "build", "{task}", "{plan}", "--template", "task-deep-dive", "--json"], 0, "tokens", None),
    (["kb", "search", "overage", "--limit", "3", "--project", "{project_id}", "--json"], 0, "hits", "kb"),
    (["kb", "search", "overage", "--project", "{project_id}"], 0, "", None),
    (
        [
            "kb",
            "load-context",
            "Add overage billing to invoices",
            "--max-results",
            "3",
            "--max-hops",
            "1",
            "--project",
            "{project_id}",
            "--json",
        ],
        0,
        "confidence",
        None,
    ),  # fmt: skip
    (["kb", "load-context", "Add overage billing to invoices", "--project", "{project_id}"], 0, "", None),
    (["kb", "entry", "{code}", "--project", "{project_id}", "--json"], 0, "{code}", None),
    (["kb", "entry", "{code}", "--project", "{project_id}"], 0, "{code}", None),
    (["docs", "index", DEMO_DOCS, "--force", "--project", "{project_id}", "--json"], 0, "success", None),
    (["docs", "index", DEMO_DOCS, "--project", "{project_id}"], 0, "", None),
    (["tool", "get_entry", "--args", '{{"code": "{code}"}}', "--project", "{project_id}"], 0, "{code}", None),
    (
        ["tool", "update_entry", "--args", '{{"code": "{code}", "add_code_paths": ["billing/overage.py"]}}']
        + ["--project", "{project_id}", "--user", "maya@demo.orrery.dev"],
        0,
        "billing/overage.py",
        None,
    ),
    (["tool", "update_entry", "--args", "[]"], 1, "must be a JSON object", None),
    (["docs", "story", "US-004", "--project", "{project_id}"], 0, "US-004", None),
    (
        [
            "docs",
            "search",
            "overage",
            "invoice",
            "--scope",
            "stories",
            "--limit",
            "2",
            "--project",
            "{project_id}",
        ],
        0,
        "",
        None,
    ),  # fmt: skip
    (["docs", "summary", "--project", "{project_id}"], 0, "", None),
    (["chat", "--demo", "--once", "What plan does this task belong to?", "--json"], 0, "reply", None),
    (["chat", "--once", "What blocks this task?", "--session", "{session_id}"], 0, "", None),
    (
        [
            "chat",
            "--once",
            "Hello",
            "--user",
            "maya@demo.orrery.dev",
            "--project",
            "{project_id}",
            "--focus",
            "task:{task}",
            "--agent",
            "coach",
            "--json",
        ],
        0,
        "coach",
        None,
    ),  # fmt: skip
    (
        [
            "demo",
            "synth",
            "--entities",
            "30",
            "--edges-per-entity",
            "2",
            "--kb-entries",
            "5",
            "--seed",
            "3",
            "--json",
        ],
        0,
        "digest",
        None,
    ),  # fmt: skip
    (
        ["sessions", "list", "--user", "maya@demo.orrery.dev", "--limit", "5", "--offset", "0", "--json"],
        0,
        "{session_id}",
        None,
    ),
    (
        ["sessions", "rename", "--session", "{session_id}", "Pricing plan", "--user", "maya@demo.orrery.dev"],
        0,
        "renamed",
        None,
    ),
    (["sessions", "list", "--user", "maya@demo.orrery.dev"], 0, "Pricing plan", None),
    (
        ["sessions", "create", "--user", "maya@demo.orrery.dev", "--no-remember", "--json"],
        0,
        '"remember": false',
        None,
    ),
    (["sessions", "update", "--session", "{session_id}", "--no-remember"], 0, "not remembered", None),
    (["sessions", "list", "--user", "maya@demo.orrery.dev"], 0, "not remembered", None),
    (
        ["sessions", "update", "--session", "{session_id}", "--remember", "--user", "maya@demo.orrery.dev"],
        0,
        "session remembered",
        None,
    ),
    (
        ["sessions", "update", "--session", "{session_id}", "--user", "sam@example.org", "--no-remember"],
        1,
        "not found",
        None,
    ),
    (["sessions", "update", "--session", "{session_id}"], 2, "nothing to change", None),
    (["memory", "show", "--user", "maya@demo.orrery.dev"], 0, "recall across chats: on", None),
    (
        [
            "memory",
            "set",
            "--user",
            "maya@demo.orrery.dev",
            "--no-recall-across-chats",
            "--other-projects",
            "--json",
        ],
        0,
        '"recall_across_chats": false, "recall_other_projects": true',
        None,
    ),
    (
        ["memory", "set", "--user", "maya@demo.orrery.dev", "--recall-across-chats", "--no-other-projects"],
        0,
        "recall from other projects: off",
        None,
    ),
    (["memory", "show", "--user", "sam@example.org", "--json"], 0, '"recall_across_chats": true', None),
    (["memory", "set", "--user", "maya@demo.orrery.dev"], 2, "nothing to change", None),
    (
        [
            "facts",
            "add",
            "--user",
            "maya@demo.orrery.dev",
            "My sister lives in Porto",
            "--subject",
            "sister",
            "--valid-from",
            "2025-06-01",
        ],
        0,
        "",
        "fact",
    ),
    (
        [
            "facts",
            "add",
            "--user",
            "maya@demo.orrery.dev",
            "My sister moved to Lisbon",
            "--supersedes",
            "{fact_id}",
        ],
        0,
        "",
        "fact",
    ),
    (["facts", "list", "--user", "maya@demo.orrery.dev", "--history", "--json"], 0, "Porto", None),
    (
        ["facts", "list", "--user", "maya@demo.orrery.dev", "--session", "{session_id}"],
        0,
        "no remembered facts",
        None,
    ),
    (
        [
            "facts",
            "edit",
            "--user",
            "maya@demo.orrery.dev",
            "{fact_id}",
            "--text",
            "My sister lives in Lisbon",
            "--subject",
            "sister",
            "--valid-from",
            "2026-03-01",
        ],
        0,
        "fact updated",
        None,
    ),  # fmt: skip
    (["facts", "forget", "--user", "sam@example.org", "{fact_id}"], 1, "not found", None),
    (["facts", "forget", "--user", "maya@demo.orrery.dev", "{fact_id}"], 0, "fact forgotten", None),
    (
        [
            "sessions",
            "delete",
            "--session",
            "{session_id}",
            "--user",
            "maya@demo.orrery.dev",
            "--forget-facts",
        ],
        0,
        "session deleted",
        None,
    ),
    (
        ["sessions", "delete", "--session", "{session_id}", "--user", "maya@demo.orrery.dev"],
        1,
        "not found",
        None,
    ),
    (["web", "link"], 0, "http://127.0.0.1:8000/login/link?token=", None),
    (
        ["web", "link", "--user", "maya@demo.orrery.dev", "--base-url", "http://example.test:9000/"],
        0,
        "http://example.test:9000/login/link?token=",
        None,
    ),
]
# Long-running commands, started and probed by `test_servers_through_the_entry_point`.
SERVER_STEPS: list[list[str]] = [
    ["serve", "--host", "127.0.0.1", "--port", "{port}"],
    ["mcp", "--http", "--host", "127.0.0.1", "--port", "{port}", "--project", "{project_id}"],
    ["chat", "--demo"],
    ["mcp", "--project", "{project_id}"],  # stdio: tests/test_mcp_stdio.py (cold) and test_mcp.py drive it
]


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ORRERY_", "DATABASE_URL"))}
    env.update(
        DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path / 'cli.db'}",
        ORRERY_SECRET_KEY="entrypoint-secret",
        LITELLM_LOCAL_MODEL_COST_MAP="True",
        PYDANTIC_AI_NO_BANNER="1",
    )
    return env


def _orrery(args: list[str], env: dict[str, str], cwd: Path) -> tuple[int, str]:
    done = subprocess.run([ORRERY, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=180)
    return done.returncode, done.stdout + done.stderr


def _fill(args: list[str], values: dict[str, str]) -> list[str]:
    return [a.format(**values) for a in args]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Commands, Path, dict[str, str]]]:
    """Run every step in order on one fresh SQLite file; yield the launcher, cwd and captured ids.

    The first step runs as a cold process; the others are forked from the test process's launcher,
    which has imported the third-party libraries once (each still runs the console script in its own
    process, with this environment and working directory)."""
    tmp = tmp_path_factory.mktemp("cli")
    env = _env(tmp)
    values: dict[str, str] = {"code": ""}
    launcher = Commands(server_launcher(), env, tmp)
    for step in STEPS:
        _step(launcher, step, values)
    yield launcher, tmp, values


def _step(launcher: Commands, step: Step, values: dict[str, str]) -> None:
    """One step: exit code and output as expected; capture the ids it prints."""
    args, code, expected, capture = step
    argv = _fill(args, values)
    cold = step is STEPS[0]  # the console script as a cold process, the rest forked (see `Commands`)
    got, output = _orrery(argv, launcher.env, launcher.cwd) if cold else launcher.run(argv)
    assert got == code, f"orrery {' '.join(argv)} exited {got}:\n{output}"
    assert expected.format(**values) in output, f"orrery {' '.join(argv)}:\n{output}"
    if capture == "fact":  # `facts add` prints the new fact's id alone
        _capture(capture, output.strip().splitlines()[-1], values)
    elif capture is not None:
        _capture(capture, json.loads(output.strip().splitlines()[-1]), values)


def _capture(name: str, data: Any, values: dict[str, str]) -> None:
    if name == "demo":
        values.update(project_id=data["project_id"], api_key=data["api_key"], **data["focus"])
    elif name == "session":
        values["session_id"] = data["id"]
    elif name == "kb":
        values["code"] = data["hits"][0]["code"]
    elif name == "fact":
        values["fact_id"] = data


def test_every_readme_step_runs(workspace: tuple[Commands, Path, dict[str, str]]) -> None:
    _launcher, _cwd, values = workspace
    assert values["session_id"] and values["code"]


def test_servers_through_the_entry_point(workspace: tuple[Commands, Path, dict[str, str]]) -> None:
    launcher, cwd, values = workspace
    env = launcher.env
    # the interactive chat reads commands from stdin and leaves on /quit
    code, output = launcher.run(["chat", "--demo"], stdin="What plan does this task belong to?\n/quit\n")
    assert code == 0, output
    assert "Launch" in output or "plan" in output.lower()

    port = _free_port()
    with _started(["serve", "--host", "127.0.0.1", "--port", str(port)], env, cwd) as base:
        first = httpx.get(f"{base}/health", timeout=5)  # answered while it warms up: alive, maybe not ready
        assert first.status_code == 200 or first.json() == {"status": "starting"}
        deadline = time.monotonic() + 90
        while (health := httpx.get(f"{base}/health", timeout=5)).status_code != 200:
            assert time.monotonic() < deadline, health.text
            time.sleep(0.2)
        assert health.json()["status"] == "ok"
        projects = httpx.get(
            f"{base}/v1/projects", headers={"Authorization": f"Bearer {values['api_key']}"}, timeout=5
        )
        assert projects.status_code == 200 and values["project_id"] in projects.text

    port = _free_port()
    args = ["mcp", "--http", "--host", "127.0.0.1", "--port", str(port), "--project", values["project_id"]]
    with _started(args, env, cwd, launcher) as base:  # forked: `serve` above is the cold server
        refused = httpx.post(f"{base}/mcp", json={}, headers={"Authorization": "Bearer orr_wrong"}, timeout=5)
        assert (
            refused.status_code == 403
        )  # a wrong key: 403 `invalid_key`, not an OAuth flow (docs/doors/mcp.md)


class _started:
    """Start `orrery ARGS` (whose argv holds --port), wait until it accepts connections, stop it after:
    a cold process, or one forked from `launcher`."""

    def __init__(
        self, args: list[str], env: dict[str, str], cwd: Path, launcher: Commands | None = None
    ) -> None:
        self.args, self.env, self.cwd, self.launcher = args, env, cwd, launcher
        self.port = int(args[args.index("--port") + 1])

    def __enter__(self) -> str:
        self.log = self.cwd / f"server-{self.port}.log"
        self.proc: subprocess.Popen[bytes] | Forked
        if self.launcher is not None:
            self.proc = self.launcher.spawn(self.args, self.env, self.cwd, self.log)
        else:
            with open(self.log, "wb") as log:
                self.proc = subprocess.Popen(
                    [ORRERY, *self.args], env=self.env, cwd=self.cwd, stdout=log, stderr=log
                )
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"orrery {' '.join(self.args)} exited: {self.log.read_text()!r}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return f"http://127.0.0.1:{self.port}"
            except OSError:
                time.sleep(0.2)
        raise AssertionError(f"orrery {' '.join(self.args)} did not start listening")

    def __exit__(self, *exc: object) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _readme_cli_lines() -> list[list[str]]:
    """Every `orrery ...` line inside the fenced code blocks of the README and the docs site's pages,
    split into words."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    lines: list[list[str]] = []
    for page in pages:
        shell = None  # inside a fence: whether it is a shell (or untagged) block
        for line in page.read_text().splitlines():
            if line.startswith("```"):
                shell = line[3:].strip() in {"", "bash", "sh"} if shell is None else None
                continue
            line = line.split("#", 1)[0].strip()
            if shell and line.startswith("orrery "):
                lines.append(line.split())
    return lines


def _command_of(words: list[str]) -> str:
    """'context show' for ['orrery', 'context', 'show', ...]; the root command for one-level ones."""
    names = [w for w in words[1:3] if re.fullmatch(r"[a-z][a-z|-]*", w)]
    return " ".join(names[:2]) if len(names) > 1 and names[0] in _GROUPS else names[0]


_GROUPS = {
    "db",
    "demo",
    "users",
    "keys",
    "sessions",
    "context",
    "kb",
    "docs",
    "eval",
    "plugins",
    "usage",
    "memory",
    "facts",
}


ELSEWHERE = {
    # documented usage this file does not start as a process yet; each runs in-process in the named test
    "`orrery context build --additional-budget`": "tests/test_cli_context.py",
    "`orrery context build --existing`": "tests/test_cli_context.py",
    "`orrery context show --at`": "tests/test_cli_context.py",
    "`orrery context show --compare`": "tests/test_cli_context.py",
    "`orrery serve --workers`": "tests/api/test_load.py",
    "command `orrery docs measure`": "tests/docs/test_story_context.py",
    "command `orrery embeddings`": "tests/test_cli_embeddings.py",
    "command `orrery eval facts`": "tests/test_cli_facts.py",
    "command `orrery eval knowledge`": "tests/evaluation/test_knowledge_eval.py",
    "command `orrery eval memory`": "tests/evaluation/test_memory_eval.py",
    "command `orrery eval focus`": "tests/evaluation/test_focus_eval.py",
    "command `orrery eval offline`": "tests/agents/test_offline_demo_questions.py",
    "command `orrery eval make-dataset`": "tests/evaluation/test_harness.py",
    "command `orrery eval scoping`": "tests/evaluation/test_harness.py",
    "command `orrery jobs`": "tests/ops/test_jobs.py",
    "command `orrery usage`": "tests/ops/test_cost_and_usage.py",
    "command `orrery memory search`": "tests/test_search_memory_doors.py",
    "command `orrery memory timeline`": "tests/test_cli_memory.py",
    "command `orrery eval capture`": "tests/test_cli_facts.py",
    "`orrery facts list --kind`": "tests/test_cli_facts.py",
    "`orrery facts add --kind`": "tests/test_cli_facts.py",
    "`orrery facts add --project`": "tests/test_cli_facts.py",
    "`orrery facts add --global`": "tests/test_cli_facts.py",
    "`orrery facts edit --kind`": "tests/test_cli_facts.py",
    "`orrery facts edit --project`": "tests/test_cli_facts.py",
    "`orrery facts edit --global`": "tests/test_cli_facts.py",
    "command `orrery kb create-entry`": "tests/knowledge/test_capture.py",
    "command `orrery entities`": "tests/api/test_context_document_doors.py",
}


def test_readme_commands_and_flags_are_all_exercised() -> None:
    exercised: dict[str, set[str]] = {}
    for args in [s[0] for s in STEPS] + SERVER_STEPS:
        words = ["orrery", *args]
        if len(words) < 2 or words[1].startswith("-"):
            continue
        exercised.setdefault(_command_of(words), set()).update(w for w in args if w.startswith("--"))
    missing: list[str] = []
    for words in _readme_cli_lines():
        command = _command_of(words)
        alternatives = command.split(" ")[-1].split("|")
        for alt in alternatives:
            name = command.rsplit(" ", 1)[0] + " " + alt if " " in command else alt
            if name not in exercised:
                missing.append(f"command `orrery {name}`")
                continue
            for flag in re.findall(r"--[a-z][a-z-]*", " ".join(words)):
                if flag not in exercised[name]:
                    missing.append(f"`orrery {name} {flag}`")
    for usage, test_file in ELSEWHERE.items():
        word = re.findall(r"[a-z-]+`$", usage)[0].rstrip("`")
        assert word in (ROOT / test_file).read_text(), f"{test_file} no longer runs {usage}"
    missing = [m for m in missing if m not in ELSEWHERE]
    assert not missing, "README or docs/ show CLI usage no entry-point test runs: " + ", ".join(
        sorted(set(missing))
    )
