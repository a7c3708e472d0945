"""The use case: clone under the gate, then analyze outside it (seed 004, ADR 0006).

Depends on the domain only; the adapters it runs are handed to it by the
composition root (``clonegate._app``).
"""
