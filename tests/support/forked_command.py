"""Stand-in for `orrery ARGS` started by another program (an MCP client starting its stdio server).

Run as `python -S -E THIS_FILE SOCKET ARGS...` (`Launcher.command` in `entrypoint.py`): standard
library only, ~10 ms of CPU instead of a cold command's ~4 s of imports. It asks the test process's
launcher, over the Unix socket SOCKET, to fork `orrery ARGS` onto this process's own stdin, stdout and
stderr, with this process's environment and working directory; then waits for the command to end and
exits with its exit code. The program that started it talks to the forked command through the pipes
it made, as to any child; if this process is killed first, the launcher kills the command.
"""

import json
import os
import signal
import socket
import sys


def main() -> None:
    path, *argv = sys.argv[1:]
    request = {"pid": os.getpid(), "argv": argv, "environ": dict(os.environ), "cwd": os.getcwd()}
    with socket.socket(socket.AF_UNIX) as sock:
        sock.connect(path)
        sock.sendall(json.dumps(request).encode() + b"\n")
        answer = sock.makefile().readline().strip()
    code = int(answer) if answer else 1
    if code < 0:  # the command ended on a signal: end the same way
        signal.signal(-code, signal.SIG_DFL)
        os.kill(os.getpid(), -code)
    sys.exit(code)


if __name__ == "__main__":
    main()
