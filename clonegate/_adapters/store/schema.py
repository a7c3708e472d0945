"""The result store's schema, as a list of migrations (ADR 0016).

``PRAGMA user_version`` is the number of migrations applied. Opening a database runs
the missing ones, each in its own transaction, so a database made by an older
clonegate is brought up to date in place, and one interrupted half-way is left at the
last complete version. A database from a newer clonegate (a version above
``len(MIGRATIONS)``) is refused rather than misread.
"""

from __future__ import annotations

import sqlite3

__all__ = ["MIGRATIONS", "SchemaError", "migrate", "schema_version"]

MIGRATIONS: tuple[str, ...] = (
    # 1: runs, one report per input line, and each report's full inventory.
    """
    CREATE TABLE runs (
        id INTEGER PRIMARY KEY,
        started_at TEXT NOT NULL,        -- ISO 8601, UTC
        finished_at TEXT,                -- NULL: still running, or the process died
        options TEXT NOT NULL,           -- JSON: what shapes the results
        summary TEXT                     -- JSON: counts, written when the run ends
    );
    CREATE TABLE reports (
        id INTEGER PRIMARY KEY,
        run_id INTEGER NOT NULL REFERENCES runs (id),
        line INTEGER NOT NULL,           -- the input line (RepositoryReport.index)
        key TEXT NOT NULL,               -- RepoURL.key; '' for a line that is no URL
        url TEXT NOT NULL,               -- as reported: credentials redacted
        status TEXT NOT NULL,
        error_phase TEXT,
        error_kind TEXT,
        error TEXT,
        branch TEXT,
        commit_id TEXT,
        committed_at TEXT,
        analyzer_version TEXT,
        reused INTEGER NOT NULL DEFAULT 0,
        duplicate_of INTEGER,
        waited REAL, setup REAL, clone REAL, analysis REAL,
        test_files INTEGER,
        tests INTEGER,
        document TEXT NOT NULL,          -- the report as the CLI prints it (JSON)
        UNIQUE (run_id, line)
    );
    CREATE INDEX reports_by_key ON reports (key, status, run_id);
    CREATE TABLE files (
        report_id INTEGER NOT NULL,
        file_no INTEGER NOT NULL,
        path TEXT NOT NULL,
        framework TEXT NOT NULL,
        language TEXT NOT NULL,
        config_note TEXT NOT NULL,
        PRIMARY KEY (report_id, file_no)
    ) WITHOUT ROWID;
    CREATE TABLE suites (
        report_id INTEGER NOT NULL,
        file_no INTEGER NOT NULL,
        suite_no INTEGER NOT NULL,       -- in file order, depth first
        parent_no INTEGER,               -- NULL: at the file's top level
        name TEXT NOT NULL,
        line INTEGER NOT NULL,
        PRIMARY KEY (report_id, file_no, suite_no)
    ) WITHOUT ROWID;
    CREATE TABLE tests (
        report_id INTEGER NOT NULL,
        file_no INTEGER NOT NULL,
        test_no INTEGER NOT NULL,        -- in file order
        suite_no INTEGER,                -- NULL: at the file's top level
        name TEXT NOT NULL,
        line INTEGER NOT NULL,
        status TEXT NOT NULL,
        PRIMARY KEY (report_id, file_no, test_no)
    ) WITHOUT ROWID;
    CREATE TABLE scan_errors (
        report_id INTEGER NOT NULL,
        error_no INTEGER NOT NULL,
        path TEXT NOT NULL,
        phase TEXT NOT NULL,
        message TEXT NOT NULL,
        PRIMARY KEY (report_id, error_no)
    ) WITHOUT ROWID;
    """,
    # 2: the content-addressed analysis cache; ``used`` orders eviction (least
    # recently used first) by a counter, not by a clock that can step back.
    """
    CREATE TABLE analysis_cache (
        key BLOB PRIMARY KEY,
        value BLOB NOT NULL,
        used INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX analysis_cache_by_use ON analysis_cache (used);
    """,
    # 3: a reused report shares the inventory rows of the report it was reused from
    # (``inventory_of``; NULL: rows of its own) instead of copying them into each run.
    """
    ALTER TABLE reports ADD COLUMN inventory_of INTEGER;
    CREATE INDEX reports_by_inventory ON reports (inventory_of) WHERE inventory_of IS NOT NULL;
    """,
    # 4: what each clone used of memory (RepositoryReport.clone_memory, bytes; NULL:
    # no clone, or not measured), where the next run's memory budget starts from.
    """
    ALTER TABLE reports ADD COLUMN clone_memory INTEGER;
    """,
    # 5: test files of languages and frameworks the analyzer does not read
    # (AnalysisTotals.unread, summed; the breakdown is in ``document``). NULL: no
    # analysis, or one stored before they were counted, which did not look.
    """
    ALTER TABLE reports ADD COLUMN unread_files INTEGER;
    """,
    # 6: clone attempts that failed and were tried again (len(RepositoryReport.attempts);
    # their kinds and messages are in ``document``). 0 in rows stored before retries,
    # which made one attempt (issue 43).
    """
    ALTER TABLE reports ADD COLUMN retried_attempts INTEGER NOT NULL DEFAULT 0;
    """,
    # 7: a run drawn after the fact (ADR 0020). Each repository's phases (waiting,
    # setup, clone per attempt, retry waits, analysis; kept here, not in ``document``,
    # like the inventory), and each run's events: its limits' first values, then each
    # change. Instants are microseconds since the Unix epoch (UTC): exact, and a third
    # of ISO 8601's bytes. Reports stored before have no phases, runs no events.
    """
    CREATE TABLE phases (
        report_id INTEGER NOT NULL,
        phase_no INTEGER NOT NULL,       -- in order
        name TEXT NOT NULL,              -- a PhaseName value
        attempt INTEGER,                 -- the clone attempt; NULL: listing, analysis
        started INTEGER NOT NULL,
        ended INTEGER NOT NULL,
        PRIMARY KEY (report_id, phase_no)
    ) WITHOUT ROWID;
    CREATE TABLE run_events (
        run_id INTEGER NOT NULL,
        event_no INTEGER NOT NULL,       -- in order
        kind TEXT NOT NULL,              -- a RunEventKind value
        at INTEGER NOT NULL,
        value INTEGER NOT NULL,
        detail TEXT NOT NULL,
        PRIMARY KEY (run_id, event_no)
    ) WITHOUT ROWID;
    """,
    # 8: what a forge's listing said of the repository (ADR 0023), for a line that
    # came from one. The whole record is in ``document`` (``listed``); these are what
    # a query reads: an incremental run's skip (the forge's id and ``pushed_at``, in
    # microseconds since the Unix epoch, UTC: compared exactly) and the history (the
    # forge, the stars). NULL: a line given as a URL, or a report stored before.
    """
    ALTER TABLE reports ADD COLUMN forge TEXT;
    ALTER TABLE reports ADD COLUMN forge_id TEXT;
    ALTER TABLE reports ADD COLUMN pushed_at INTEGER;
    ALTER TABLE reports ADD COLUMN stars INTEGER;
    """,
)


class SchemaError(Exception):
    """The database is not one this clonegate can use."""


def migrate(connection: sqlite3.Connection, upto: int = len(MIGRATIONS)) -> int:
    """Apply the migrations missing from ``connection``'s database, up to ``upto``;
    the version it had before. The connection must be in autocommit mode."""
    version = schema_version(connection)
    if version > len(MIGRATIONS):
        raise SchemaError(
            f"the database has schema version {version}, newer than this clonegate's "
            f"{len(MIGRATIONS)}: use a newer clonegate, or another database"
        )
    for number in range(version, upto):
        # One transaction per step: executescript would commit on its own, so the
        # statements run one by one between BEGIN IMMEDIATE and COMMIT.
        connection.execute("BEGIN IMMEDIATE")
        try:
            if schema_version(connection) > number:  # another process migrated meanwhile
                connection.execute("ROLLBACK")
                continue
            for statement in _statements(MIGRATIONS[number]):
                connection.execute(statement)
            connection.execute(f"PRAGMA user_version = {number + 1}")
            connection.execute("COMMIT")
        except BaseException:
            connection.execute("ROLLBACK")
            raise
    return version


def schema_version(connection: sqlite3.Connection) -> int:
    """The number of migrations applied to ``connection``'s database."""
    (version,) = connection.execute("PRAGMA user_version").fetchone()
    return int(version)


def _statements(script: str) -> list[str]:
    lines = [line.split("--", 1)[0] for line in script.splitlines()]
    return [s.strip() for s in "\n".join(lines).split(";") if s.strip()]
