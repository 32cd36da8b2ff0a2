"""`python -m backend`: the `orrery` command line."""

from backend.app.cli import main

main()
