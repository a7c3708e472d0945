"""The error types of clonegate, one per kind of failure.

``clonegate.CloneError`` (with its ``kind``, an ``ErrorKind``), ``AnalysisError`` and
``InvalidURLError`` are the bases a caller usually catches; the types here say which
failure it was, and the limiters' errors say why a shared limit could not be held.
"""

from ._exports import exports

TYPE_CHECKING = False  # not typing's (ADR 0003)

if TYPE_CHECKING:
    from ._domain.errors import AuthenticationError as AuthenticationError
    from ._domain.errors import CloneCancelledError as CloneCancelledError
    from ._domain.errors import CloneTimeoutError as CloneTimeoutError
    from ._domain.errors import ConnectionLostError as ConnectionLostError
    from ._domain.errors import EmptyRepositoryError as EmptyRepositoryError
    from ._domain.errors import HostUnavailableError as HostUnavailableError
    from ._domain.errors import InvalidRepositoryError as InvalidRepositoryError
    from ._domain.errors import OutOfMemoryError as OutOfMemoryError
    from ._domain.errors import ProtocolError as ProtocolError
    from ._domain.errors import ReadTimeoutError as ReadTimeoutError
    from ._domain.errors import RepositoryNotFoundError as RepositoryNotFoundError
    from ._domain.errors import StorageError as StorageError
    from ._domain.errors import ThrottledError as ThrottledError
    from ._domain.errors import TooLargeError as TooLargeError
    from ._domain.errors import TooSlowError as TooSlowError
    from ._domain.errors import TransportError as TransportError
    from ._domain.errors import UnavailableError as UnavailableError
    from ._domain.errors import UnreachableError as UnreachableError
    from ._domain.limits import LeaseLostError as LeaseLostError
    from ._domain.limits import LimitConfigError as LimitConfigError
    from ._domain.limits import LimitError as LimitError
    from ._domain.limits import LimiterUnavailableError as LimiterUnavailableError

# The one table of this module's names (clonegate._exports).
_TABLE = {
    "._domain.errors": (
        "AuthenticationError CloneCancelledError CloneTimeoutError ConnectionLostError "
        "EmptyRepositoryError HostUnavailableError InvalidRepositoryError OutOfMemoryError "
        "ProtocolError ReadTimeoutError RepositoryNotFoundError StorageError ThrottledError "
        "TooLargeError TooSlowError TransportError UnavailableError UnreachableError"
    ),
    "._domain.limits": "LeaseLostError LimitConfigError LimitError LimiterUnavailableError",
}

__all__, __getattr__, __dir__ = exports(__name__, _TABLE)
