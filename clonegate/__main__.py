"""``python -m clonegate``: the same command line as the ``clonegate`` script."""

from clonegate_cli import main

main()
