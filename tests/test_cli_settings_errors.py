"""A setting the environment gets wrong stops `orrery` with one line per problem, not a traceback
(issue 43: `ORRERY_ENV=production` without a secret printed 51 lines before its one clear line).
Through the real console script, each command in its own process."""

from __future__ import annotations

import os
from pathlib import Path

from tests.support.entrypoint import server_launcher


def test_a_refused_setting_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    base = {k: v for k, v in os.environ.items() if not k.startswith("ORRERY_")}
    base["DATABASE_URL"] = f"sqlite+aiosqlite:///{tmp_path / 'orrery.db'}"
    launcher = server_launcher()
    for args, env, line in (
        (
            ["serve"],
            {"ORRERY_ENV": "production"},
            "error: ORRERY_SECRET_KEY must be set to a real secret when ORRERY_ENV=production",
        ),
        (["demo", "summary"], {"ORRERY_ENV": "staging"}, "error: ORRERY_ENV: Input should be"),
    ):
        code, stdout, stderr = launcher.run_split(args, environ=base | env, cwd=tmp_path)
        assert code == 1 and stdout == "", (stdout, stderr)
        assert stderr.startswith(line) and len(stderr.strip().splitlines()) == 1, stderr
        assert "Traceback" not in stderr
