"""Forges' list APIs (issue 45, ADR 0023): one adapter per forge behind the listing
port (``clonegate._domain.listing``)."""
