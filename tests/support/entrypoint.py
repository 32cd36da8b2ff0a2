"""Run the real `orrery` console script for many steps, each in its own process, cheaply.

A cold `orrery` process spends most of its CPU importing pydantic-ai, FastAPI and SQLAlchemy (~1-3 s
on the CI machine); the entry-point test runs ~50 commands. `Launcher` keeps one process that has
done those imports (`entrypoint_zygote.py`) and forks it per command: every command still runs the
installed console script, in its own process, with its own exit code and output.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from types import TracebackType

ZYGOTE = Path(__file__).with_name("entrypoint_zygote.py")


class Launcher:
    """Forks `orrery ARGS` from a pre-imported process with one env and cwd (a context manager)."""

    def __init__(self, script: str, env: dict[str, str], cwd: Path, preload: tuple[str, ...] = ()) -> None:
        self.script, self.env, self.cwd = script, env, cwd
        self.preload = preload
        """Third-party modules the launcher imports once besides the zygote's own set."""
        self.count = 0
        self.cpu: list[tuple[list[str], float]] = []
        """CPU seconds (user + system) each step's process used, in order."""
        self.scratch = tempfile.TemporaryDirectory()  # each step's stdin, stdout and stderr files

    def __enter__(self) -> Launcher:
        self.proc = subprocess.Popen(
            [sys.executable, str(ZYGOTE), self.script, *self.preload],
            env=self.env,
            cwd=self.cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._reply() == "ready"
        return self

    def _reply(self) -> str:
        line = self.proc.stdout.readline()  # type: ignore[union-attr]
        if not line:
            raise RuntimeError(f"the entry-point launcher exited with {self.proc.wait()}")
        return line.strip()

    def run(
        self, args: list[str], stdin: str | None = None, env: dict[str, str] | None = None
    ) -> tuple[int, str]:
        """`orrery ARGS` in a new process (`env`: variables changed for this one): its exit code and
        stdout + stderr (like `subprocess.run`)."""
        self.count += 1
        files = {
            name: Path(self.scratch.name) / f"{self.count}.{name}" for name in ("stdin", "stdout", "stderr")
        }
        files["stdin"].write_text(stdin or "")
        for name in ("stdout", "stderr"):
            files[name].touch()
        request = {"argv": args, "env": env or {}} | {name: str(path) for name, path in files.items()}
        self.proc.stdin.write(json.dumps(request) + "\n")  # type: ignore[union-attr]
        self.proc.stdin.flush()  # type: ignore[union-attr]
        code, cpu = self._reply().split()
        self.cpu.append((args, float(cpu)))
        output = files["stdout"].read_text() + files["stderr"].read_text()
        for path in files.values():
            path.unlink()
        return int(code), output

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.proc.stdin.close()  # type: ignore[union-attr]
        self.proc.wait(timeout=30)
        self.proc.stdout.close()  # type: ignore[union-attr]
        self.scratch.cleanup()
