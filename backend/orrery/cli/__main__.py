"""`python -m orrery.cli`."""

from orrery.cli import main

main()
