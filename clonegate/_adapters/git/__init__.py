"""The dulwich VCS adapter behind the domain's ``VCS`` port (ADR 0003)."""
