"""Run the real `orrery` console script for many steps, each in its own process, cheaply.

A cold `orrery` process spends most of its CPU importing pydantic-ai, FastAPI and SQLAlchemy (~1-3 s
on the CI machine); the entry-point test runs ~50 commands. `Launcher` keeps one process that has
done those imports (`entrypoint_zygote.py`) and forks it per command: every command still runs the
installed console script, in its own process, with its own exit code and output.
"""

from __future__ import annotations

import atexit
import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import TracebackType

ZYGOTE = Path(__file__).with_name("entrypoint_zygote.py")
STAND_IN = Path(__file__).with_name("forked_command.py")
ORRERY = str(Path(sys.executable).with_name("orrery"))
SERVER_PRELOAD = (
    "litellm",
    "pydantic_ai.models.openai",
    "asyncpg",
    "aiosqlite",
    "mcp.server.mcpserver",
    "mcp.server.stdio",
)
"""What `orrery serve` and `orrery mcp` import from third parties besides the launcher's own set (a
provider's client for the tests that run a fake upstream model; the MCP SDK's server, ~0.7 CPU-s a
stdio server)."""
_server_launcher: Launcher | None = None


class Launcher:
    """Forks `orrery ARGS` from a pre-imported process with one env and cwd (a context manager);
    `python`: the interpreter (and so the environment) the launcher runs in."""

    def __init__(
        self,
        script: str,
        env: dict[str, str],
        cwd: Path,
        preload: tuple[str, ...] = (),
        python: str = sys.executable,
    ) -> None:
        self.script, self.env, self.cwd, self.python = script, env, cwd, python
        self.preload = preload
        """Third-party modules the launcher imports once besides the zygote's own set."""
        self.count = 0
        self.cpu: list[tuple[list[str], float]] = []
        """CPU seconds (user + system) each step's process used, in order."""
        self.scratch = tempfile.TemporaryDirectory()  # each step's stdin, stdout and stderr files
        self.lock = threading.Lock()  # one request and its answer at a time
        self.listener: socket.socket | None = None  # for `command`'s stand-ins, opened on first use

    def __enter__(self) -> Launcher:
        self.proc = subprocess.Popen(
            [self.python, str(ZYGOTE), self.script, *self.preload],
            env=self.env,
            cwd=self.cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self._reply() == "ready"
        return self

    def request(self, request: dict[str, object]) -> str:
        """Send one request line to the launcher; its one-line answer."""
        with self.lock:
            self.proc.stdin.write(json.dumps(request) + "\n")  # type: ignore[union-attr]
            self.proc.stdin.flush()  # type: ignore[union-attr]
            return self._reply()

    def spawn(
        self, args: list[str], environ: dict[str, str], cwd: Path, log: Path, code: str | None = None
    ) -> Forked:
        """Start `orrery ARGS` (a server) in a new process with exactly `environ`, in `cwd`, its
        output to `log`; answers at once with a handle like `subprocess.Popen`'s. `code`: `python -c
        CODE ARGS` instead of the console script."""
        request = {"argv": args, "spawn": True, "environ": environ, "cwd": str(cwd), "code": code}
        request |= {"stdin": os.devnull, "stdout": str(log), "stderr": str(log)}
        return Forked(self, int(self.request(request)))

    def command(self, args: list[str]) -> list[str]:
        """A command line that runs `orrery ARGS` for another program to start (an MCP client
        starting its stdio server): a stand-in process (`forked_command.py`, standard library only)
        has this launcher fork the command onto the stand-in's own stdin, stdout and stderr, with its
        environment and working directory, and exits with the command's exit code."""
        if self.listener is None:
            self.listener = socket.socket(socket.AF_UNIX)
            self.listener.bind(str(Path(self.scratch.name) / "stand-ins.sock"))
            self.listener.listen()
            threading.Thread(target=self._accept, args=(self.listener,), daemon=True).start()
        return [sys.executable, "-S", "-E", str(STAND_IN), self.listener.getsockname(), *args]

    def _accept(self, listener: socket.socket) -> None:
        while True:
            try:
                connection, _ = listener.accept()
            except OSError:  # closed by __exit__
                return
            threading.Thread(target=self._stand_in, args=(connection,), daemon=True).start()

    def _stand_in(self, connection: socket.socket) -> None:
        """Fork one stand-in's command onto its fds 0-2 (opened by the child through /proc); answer
        its exit code when it ends, or kill it when the stand-in goes away first."""
        with connection:
            request = json.loads(connection.makefile().readline())
            fds = {
                name: f"/proc/{request['pid']}/fd/{fd}"
                for fd, name in enumerate(("stdin", "stdout", "stderr"))
            }
            spawn = {
                "argv": request["argv"],
                "spawn": True,
                "environ": request["environ"],
                "cwd": request["cwd"],
            }
            child = Forked(self, int(self.request(spawn | fds)))
            while child.poll() is None:
                if select.select([connection], [], [], 0.05)[0]:  # the stand-in's end closed: it was killed
                    child.kill()
                    child.wait()
                    return
            connection.sendall(f"{child.returncode}\n".encode())

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
        code, stdout, stderr = self.run_split(args, stdin, env)
        return code, stdout + stderr

    def run_split(
        self,
        args: list[str],
        stdin: str | None = None,
        env: dict[str, str] | None = None,
        *,
        environ: dict[str, str] | None = None,
        cwd: Path | None = None,
        code: str | None = None,
    ) -> tuple[int, str, str]:
        """As `run`, with stdout and stderr apart. `environ`: exactly this environment instead of the
        launcher's; `cwd`: another working directory; `code`: `python -c CODE ARGS` instead of the
        console script (a short program that must run in a process of its own)."""
        with self.lock:
            self.count += 1
            step = self.count
        files = {name: Path(self.scratch.name) / f"{step}.{name}" for name in ("stdin", "stdout", "stderr")}
        files["stdin"].write_text(stdin or "")
        for name in ("stdout", "stderr"):
            files[name].touch()
        request = {"argv": args, "env": env or {}} | {name: str(path) for name, path in files.items()}
        request |= {"environ": environ, "cwd": str(cwd) if cwd else None, "code": code}
        exit_code, cpu = self.request(request).split()
        self.cpu.append((args, float(cpu)))
        stdout, stderr = files["stdout"].read_text(), files["stderr"].read_text()
        for path in files.values():
            path.unlink()
        return int(exit_code), stdout, stderr

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if self.listener is not None:
            self.listener.close()
        self.proc.stdin.close()  # type: ignore[union-attr]
        self.proc.wait(timeout=30)
        self.proc.stdout.close()  # type: ignore[union-attr]
        self.scratch.cleanup()


class Forked:
    """A process `Launcher.spawn` started: what the tests use of `subprocess.Popen` (the launcher,
    its parent, reaps it)."""

    def __init__(self, launcher: Launcher, pid: int) -> None:
        self.launcher, self.pid = launcher, pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            answer = self.launcher.request({"wait": self.pid, "nohang": True})
            if answer != "running":
                self.returncode = int(answer.split()[0])
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.poll() is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(str(self.pid), timeout or 0)
            time.sleep(0.02)
        assert self.returncode is not None
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            os.kill(self.pid, sig)

    def terminate(self) -> None:
        self.send_signal(signal.SIGTERM)

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)


class Commands:
    """`orrery ARGS` forked from a shared launcher with exactly this environment and working
    directory (the launcher's own are the test process's): `run` and `spawn` as `Launcher`'s."""

    def __init__(self, launcher: Launcher, env: dict[str, str], cwd: Path) -> None:
        self.launcher, self.env, self.cwd = launcher, env, cwd

    def run(
        self, args: list[str], stdin: str | None = None, env: dict[str, str] | None = None
    ) -> tuple[int, str]:
        """`orrery ARGS` to its end (`env`: variables changed for this one): exit code, stdout + stderr."""
        environ = self.env | (env or {})
        code, stdout, stderr = self.launcher.run_split(args, stdin, environ=environ, cwd=self.cwd)
        return code, stdout + stderr

    def spawn(self, args: list[str], environ: dict[str, str], cwd: Path, log: Path) -> Forked:
        return self.launcher.spawn(args, environ, cwd, log)


def server_launcher() -> Launcher:
    """One launcher per test process for `orrery serve` and the commands tests run among in-process
    checks: a cold server start spends ~4 s of CPU on imports (~9 s with a provider's client), a
    command ~3 s; forked, under 1 s. Ended when the test process exits."""
    global _server_launcher
    if _server_launcher is None:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ORRERY_", "DATABASE_URL"))}
        launcher = Launcher(ORRERY, env, Path(tempfile.gettempdir()), preload=SERVER_PRELOAD)
        _server_launcher = launcher.__enter__()
        atexit.register(launcher.__exit__, None, None, None)
    return _server_launcher
