"""A real `orrery serve` process a test can `kill -9` (crash recovery, the SQLite server lock)."""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.support.load import ROOT, _child_env, _cli, _wait_healthy, free_port


@dataclass
class Server:
    """A running server: its process, base URL and log."""

    proc: subprocess.Popen[bytes]
    base: str
    log: Path

    def kill(self) -> None:
        """SIGKILL: no shutdown, no cleanup, like a crash or the OOM killer."""
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait()


def cli(*args: str) -> list[str]:
    """The `orrery` command line (the real entry point) with `args`."""
    return [*_cli(), *args]


@contextmanager
def killable_server(database_url: str, secret: str, env: dict[str, str] | None = None) -> Iterator[Server]:
    """`orrery serve` in a child process (cwd outside the repo: no `.env`), healthy; ended at exit
    unless the test killed it."""
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp:
        log_path = Path(tmp) / "server.log"
        command = cli("serve", "--host", "127.0.0.1", "--port", str(port))
        with open(log_path, "w") as log:
            proc = subprocess.Popen(
                command,
                cwd=tmp,
                env=_child_env(database_url, secret, ROOT, env),
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        server = Server(proc, f"http://127.0.0.1:{port}", log_path)
        try:
            _wait_healthy(proc, server.base, log_path)
            yield server
        finally:
            if proc.poll() is None:
                proc.terminate()
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    proc.wait()
