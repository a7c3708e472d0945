"""A checkout that runs nothing from any git configuration (ADR 0012); worker side."""

from __future__ import annotations

import errno
import functools
from typing import TYPE_CHECKING, Any

from ..._domain.errors import ErrorKind
from ..._domain.urls import visible
from .worker_errors import Failure

if TYPE_CHECKING:
    from dulwich.repo import Repo


def checkout(write: Any) -> None:
    """Write the working tree; a path git would refuse is the repository's fault, and
    so is a tree too deep to walk; a file the file system cannot write is ``storage``
    (a name past its length limit, a full disk), whatever the repository holds."""
    from dulwich.index import InvalidPathError
    from dulwich.object_store import MaxTreeDepthExceeded

    try:
        write()
    except (RecursionError, MaxTreeDepthExceeded):
        raise Failure(
            ErrorKind.INVALID_REPOSITORY, "the repository's tree is nested too deeply to check out"
        ) from None
    except OSError as exc:
        if exc.errno == errno.EFBIG:
            raise  # past the size limit: too_large (worker_errors)
        raise Failure(
            ErrorKind.STORAGE, f"cannot write the clone's files: {exc.strerror or 'error'}"
        ) from None
    except InvalidPathError as exc:
        raw = exc.args[0] if exc.args else b""
        text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
        path = visible(text.removeprefix("invalid path ").strip("'"))[:200]
        raise Failure(
            ErrorKind.INVALID_REPOSITORY,
            f"the repository holds a file path git refuses to check out ({path})",
        ) from None


@functools.cache
def isolated_repo_class() -> type[Repo]:
    """dulwich's Repo, blind to every git configuration but the repository's own.

    A checkout reads no ``~/.gitconfig`` or ``/etc/gitconfig`` (whose filters,
    git-lfs's among them, would run commands for the repository's files) and
    applies no filter at all, the built-in ones (LFS downloads, line endings)
    included: the working tree holds the blobs exactly as committed.
    """
    from dulwich.config import StackedConfig
    from dulwich.repo import Repo

    class IsolatedRepo(Repo):
        def get_config_stack(self) -> StackedConfig:
            own = self.get_config()
            return StackedConfig([own], writable=own)

        def get_blob_normalizer(self, config: Any = None, tree: Any = None) -> Any:
            return _AS_COMMITTED

    return IsolatedRepo


class _AsCommitted:
    """A blob normalizer that changes nothing, in or out."""

    def checkin_normalize(self, blob: Any, path: bytes) -> Any:
        return blob

    def checkout_normalize(self, blob: Any, path: bytes) -> Any:
        return blob


_AS_COMMITTED = _AsCommitted()
