"""A repository of a run: one input line, parsed once into what every step needs."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace

from .errors import InvalidURLError
from .listed import Listed
from .reports import RepositoryReport
from .urls import RepoURL, parse_repo_url, redact, visible

__all__ = ["Repository"]


@dataclass(frozen=True, slots=True)
class Repository:
    """One line of a batch (or one :meth:`~clonegate.AnalyzeUseCase.execute`), parsed
    once where it enters the use case; the duplicate index, the store, the gate and the
    report read it from here instead of parsing the text again (issue 42).

    Attributes:
      index: the line's place in its batch (the report's ``index``).
      url: the line as given, user-info included: what the VCS is handed (it applies
        its own URL policy, ADR 0013). Never shown: not in ``repr``.
      parsed: the validated URL; None if the line is no repository URL.
      problem: why it is not (the error its report carries); None if it is.
      shown: the form reports, events and messages show: the parsed URL redacted,
        or, for a line that does not parse, the line with its user-info masked and
        every unprintable character escaped (:func:`~clonegate.visible`).
      key: the repository's identity (:attr:`RepoURL.key`): the store's key, and
        what makes two lines duplicates; ``""`` for a line that is no URL.
      listed: what a forge's listing said of it, when the line was a :class:`Listed`
        (whose ``clone_url`` is then :attr:`url`); None for a line given as a URL.
    """

    index: int
    url: str = field(repr=False)
    parsed: RepoURL | None
    problem: InvalidURLError | None = field(repr=False, compare=False)
    shown: str
    key: str
    listed: Listed | None = field(default=None, compare=False)

    @classmethod
    def of(cls, entry: str | Listed, index: int = 0) -> Repository:
        """Line ``index``, ``entry``, parsed as the use case reads every line: local paths
        and ``file://`` accepted (the VCS refuses them under its own policy). A
        :class:`Listed` is its ``clone_url`` (already checked to be a network URL),
        with the listing's metadata kept beside it."""
        if isinstance(entry, Listed):
            return replace(cls.of(entry.clone_url, index), listed=entry)
        url = entry
        try:
            parsed = parse_repo_url(url, allow_local=True)
        except InvalidURLError as exc:
            # Kept without its traceback: the frames it holds would outlive the parse.
            problem = exc.with_traceback(None)
            # Shown escaped: a line that is no URL may hold terminal controls or an
            # undecodable byte, which no report, event or store row may carry raw.
            return cls(index, url, None, problem, visible(redact(url.strip())), "")
        return cls(index, url, parsed, None, parsed.redacted, parsed.key)

    def refused(self) -> RepositoryReport:
        """The report of a line that is no URL: failed in phase ``clone``, with its
        :attr:`problem`'s kind and message (kept, not raised again: a raised exception
        would hold the frames that raised it for as long as this value lives)."""
        problem = self.problem or InvalidURLError(self.shown, "not a repository URL")
        return RepositoryReport.failure(self.shown, self.index, "clone", problem.kind, str(problem))

    @property
    def digest(self) -> bytes:
        """16 bytes naming the repository (from :attr:`key`): what a batch keeps per
        distinct repository to find duplicates; empty for a line that is no URL, which
        is never a duplicate of anything."""
        if not self.key:
            return b""
        return hashlib.blake2b(self.key.encode(), digest_size=16).digest()
