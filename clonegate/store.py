"""The result store: every report of every run kept, read back, compared (ADR 0016).

``open_store(path)`` opens (creating) a SQLite store that ``with_result_store`` and
``with_incremental`` use; ``open_store_reader(path)`` reads one without writing.
``StoreSettings`` is what ``clonegate.open_analyzer(store=...)`` opens for its block.
``StoreReader.run_report(run)`` gives a run whole, as a ``RunReport`` (ADR 0020).
Any object with the ``ReportStore`` and ``AnalysisCache`` methods will do as a store.
SQLite loads when a store is opened, not when this module is imported.
"""

from ._exports import exports

TYPE_CHECKING = False  # not typing's (ADR 0003)

if TYPE_CHECKING:
    from ._adapters.store import Difference as Difference
    from ._adapters.store import HistoryEntry as HistoryEntry
    from ._adapters.store import RunInfo as RunInfo
    from ._adapters.store import RunReport as RunReport
    from ._adapters.store import SQLiteStore as SQLiteStore
    from ._adapters.store import StoreReader as StoreReader
    from ._adapters.store import StoreSettings as StoreSettings
    from ._adapters.store import TestCount as TestCount
    from ._adapters.store import open_store as open_store
    from ._adapters.store import open_store_reader as open_store_reader
    from ._domain.store import AnalysisCache as AnalysisCache
    from ._domain.store import DamagedRow as DamagedRow
    from ._domain.store import DamagedRowError as DamagedRowError
    from ._domain.store import ReportStore as ReportStore
    from ._domain.store import StoredResult as StoredResult
    from ._domain.store import StoreError as StoreError
    from ._domain.timeline import Phase as Phase
    from ._domain.timeline import RunEvent as RunEvent

# The one table of this module's names (clonegate._exports).
_TABLE = {
    "._adapters.store": (
        "Difference HistoryEntry RunInfo RunReport SQLiteStore StoreReader StoreSettings "
        "TestCount open_store open_store_reader"
    ),
    "._domain.store": (
        "AnalysisCache DamagedRow DamagedRowError ReportStore StoreError StoredResult"
    ),
    # A run drawn after the fact (ADR 0020): RepositoryReport.phases, RunReport.events.
    "._domain.timeline": "Phase RunEvent",
}

__all__, __getattr__, __dir__ = exports(__name__, _TABLE)
