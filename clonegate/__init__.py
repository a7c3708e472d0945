"""clonegate: clone many git repositories under a hard, fair limit, and analyze each clone."""

from ._semaphore import WeightedSemaphore, WeightedSemaphoreStatistics
from ._version import __version__

__all__ = ["WeightedSemaphore", "WeightedSemaphoreStatistics", "__version__"]
