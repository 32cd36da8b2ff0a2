"""`orrery web link`: a one-click, one-time sign-in link to the web app (what `make run` prints)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from orrery.cli.common import out, resolve_user, run, with_db

web_app = typer.Typer(help="The web app served at / by `orrery serve`.", no_args_is_help=True)


@web_app.command("link")
def web_link(
    user: Annotated[str, typer.Option(help="User id or email.")] = "maya@demo.orrery.dev",
    base_url: Annotated[
        str | None, typer.Option(help="Where the server is reached (default http://ORRERY_HOST:ORRERY_PORT).")
    ] = None,
) -> None:
    """Print a sign-in link for USER that works once, for 15 minutes (stored only as a hash)."""
    from orrery.config import get_settings
    from orrery.repo.web_tokens import LOGIN_LINK_TTL, issue_login_link_token

    settings = get_settings()

    async def body(db: Any) -> str:
        async with db.transaction() as session:
            found = await resolve_user(session, user)
            return await issue_login_link_token(session, found.id, settings.secret_key)

    token = run(lambda s: with_db(s, body))
    host = "127.0.0.1" if settings.host in ("0.0.0.0", "::", "") else settings.host
    base = (base_url or f"http://{host}:{settings.port}").rstrip("/")
    minutes = int(LOGIN_LINK_TTL.total_seconds() // 60)
    out.print(f"Open Orrery in your browser (one-time link, valid {minutes} minutes):")
    print(f"{base}/login/link?token={token}")
