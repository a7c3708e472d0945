"""Adapters: the domain's ports implemented with real libraries (ADR 0001).

``git``: clones with dulwich in killable worker processes. ``analysis``: the test
inventory, parsed with ``ast`` and tree-sitter in worker processes.
"""
