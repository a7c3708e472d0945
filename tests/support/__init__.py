"""Helpers of the test suite and of bench/: real servers on 127.0.0.1, proxies,
processes, fixture repositories (imported as ``tests.support.X``)."""
