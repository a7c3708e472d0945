"""The ``clonegate`` command line. It depends on the library; nothing depends on it."""
