"""`python -m backend.cli`."""

from backend.cli import main

main()
