"""`python -m orrery`: the `orrery` command line."""

from orrery.cli import main

main()
