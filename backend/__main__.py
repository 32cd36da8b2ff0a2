"""`python -m backend`: the `orrery` command line."""

from backend.cli import main

main()
