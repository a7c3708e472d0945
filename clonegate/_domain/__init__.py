"""The domain: what clonegate is about, with no I/O of its own (ADR 0001).

The weighted semaphore, the errors and their kinds, URLs, the inventory and report
types, events, and the ports the use case needs (``VCS``, ``Analyzer``). Imports
nothing from the other layers, and no adapter library (dulwich, tree-sitter,
trio-parallel).
"""
