"""A hypothesis state machine drives a WeightedSemaphore and a small reference model side by side.

The state machine runs in a worker thread; each rule runs its step inside the trio
loop with ``trio.from_thread`` and then waits until every task is blocked, so the
real semaphore has settled before it is compared with the model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pytest
import trio
import trio.testing
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
    run_state_machine_as_test,
)

from clonegate import WeightedSemaphore

WEIGHTS = st.integers(min_value=0, max_value=6)
SIZES = st.integers(min_value=0, max_value=6)


@dataclass
class Model:
    """The semantics of ADR 0002, stated independently of the implementation.

    All waiters sit in one list in order of arrival. Those that fit the current size
    form the queue; the rest are set aside. Only the queue's first waiter may be
    granted, and only when it fits what is available.
    """

    size: int
    held: int = 0
    waiters: list[tuple[int, int]] = field(default_factory=list)  # (ident, weight)
    holdings: dict[int, int] = field(default_factory=dict)  # granted, not yet released

    def available(self) -> int:
        return max(self.size - self.held, 0)

    def queue(self) -> list[tuple[int, int]]:
        return [w for w in self.waiters if w[1] <= self.size]

    def take_if_free(self, n: int) -> bool:
        if self.queue() or n > self.available():
            return False
        self.held += n
        return True

    def grant(self) -> list[int]:
        granted = []
        while (queue := self.queue()) and queue[0][1] <= self.available():
            ident, n = queue[0]
            self.waiters.remove(queue[0])
            self.held += n
            self.holdings[ident] = n
            granted.append(ident)
        return granted

    def acquire(self, ident: int, n: int) -> None:
        if self.take_if_free(n):
            self.holdings[ident] = n
        else:
            self.waiters.append((ident, n))

    def cancel(self, ident: int) -> None:
        queue = self.queue()
        was_head = bool(queue) and queue[0][0] == ident
        self.waiters = [w for w in self.waiters if w[0] != ident]
        if was_head:
            self.grant()

    def release(self, n: int) -> list[int]:
        assert n <= self.held
        self.held -= n
        return self.grant()

    def resize(self, size: int) -> None:
        self.size = size
        self.grant()

    def waiting(self) -> dict[int, int]:
        return dict(self.waiters)


class SemaphoreMachine(RuleBasedStateMachine):
    def __init__(self, nursery: trio.Nursery, token: trio.lowlevel.TrioToken) -> None:
        super().__init__()
        self.nursery = nursery
        self.token = token
        self.next_ident = 0
        self.scopes: dict[int, trio.CancelScope] = {}
        self.granted: dict[int, int] = {}  # what the real tasks report they got
        self.released: dict[int, int] = {}
        self.free_hand = 0  # tokens taken by try_acquire: released by the machine
        self.sem: WeightedSemaphore
        self.model: Model

    def _run(self, step: Any, *args: Any) -> Any:
        async def step_then_settle() -> Any:
            result = step(*args)
            await trio.testing.wait_all_tasks_blocked()
            return result

        return trio.from_thread.run(step_then_settle, trio_token=self.token)

    @initialize(size=SIZES)
    def create(self, size: int) -> None:
        self.sem = WeightedSemaphore(size)
        self.model = Model(size)

    async def _waiter(self, ident: int, n: int, scope: trio.CancelScope) -> None:
        with scope:
            await self.sem.acquire(n)
            self.granted[ident] = n

    @rule(n=WEIGHTS)
    def acquire(self, n: int) -> None:
        ident, self.next_ident = self.next_ident, self.next_ident + 1
        scope = self.scopes[ident] = trio.CancelScope()
        self._run(self.nursery.start_soon, self._waiter, ident, n, scope)
        self.model.acquire(ident, n)

    @rule(n=WEIGHTS, nowait=st.booleans())
    def try_acquire(self, n: int, nowait: bool) -> None:
        def attempt() -> bool:
            if not nowait:
                return self.sem.try_acquire(n)
            try:
                self.sem.acquire_nowait(n)
            except trio.WouldBlock:
                return False
            return True

        got = self._run(attempt)
        assert got == self.model.take_if_free(n)
        if got:
            self.free_hand += n

    @precondition(lambda self: self.model.waiting())
    @rule(data=st.data())
    def cancel(self, data: st.DataObject) -> None:
        ident = data.draw(st.sampled_from(sorted(self.model.waiting())))
        self._run(self.scopes[ident].cancel)
        self.model.cancel(ident)

    @precondition(lambda self: self.model.holdings)
    @rule(data=st.data())
    def release_holding(self, data: st.DataObject) -> None:
        ident = data.draw(st.sampled_from(sorted(self.model.holdings)))
        n = self.released[ident] = self.model.holdings.pop(ident)
        self._run(self.sem.release, n)
        self.model.release(n)

    @precondition(lambda self: self.model.holdings)
    @rule(data=st.data())
    def release_then_cancel_a_granted_waiter(self, data: st.DataObject) -> None:
        # The waiter is granted and cancelled before it runs: it keeps its tokens.
        ident = data.draw(st.sampled_from(sorted(self.model.holdings)))
        n = self.released[ident] = self.model.holdings.pop(ident)
        granted = self.model.release(n)

        def release_and_cancel() -> None:
            self.sem.release(n)
            for waiter in granted:
                self.scopes[waiter].cancel()

        self._run(release_and_cancel)

    @precondition(lambda self: self.free_hand)
    @rule()
    def release_free_hand(self) -> None:
        n, self.free_hand = self.free_hand, 0
        self._run(self.sem.release, n)
        self.model.release(n)

    @rule(extra=st.integers(min_value=1, max_value=3))
    def over_release_is_refused(self, extra: int) -> None:
        before = self._run(self.sem.statistics)
        with pytest.raises(ValueError, match="released more than held"):
            self._run(self.sem.release, before.held + extra)
        assert self._run(self.sem.statistics) == before

    @rule(size=SIZES)
    def resize(self, size: int) -> None:
        def set_size() -> None:
            self.sem.size = size

        self._run(set_size)
        self.model.resize(size)

    @invariant()
    def matches_the_model(self) -> None:
        if not hasattr(self, "sem"):
            return
        stats = self._run(self.sem.statistics)
        model = self.model
        waiting = model.waiting()
        assert stats.held >= 0
        assert (stats.size, stats.held, stats.available) == (
            model.size,
            model.held,
            model.available(),
        )
        assert (stats.tasks_waiting, stats.weight_waiting) == (
            len(waiting),
            sum(waiting.values()),
        )
        # Who got tokens is exactly who the FIFO model says, and nobody else. Checked
        # after every step, so each step's grants match; the order among the tasks
        # woken by one step is not observable (they all hold their tokens at once).
        assert self.granted == model.holdings | self.released
        # No token lost or duplicated: held is what the holders hold.
        assert model.held == sum(model.holdings.values()) + self.free_hand

    def teardown(self) -> None:
        def cancel_all() -> None:
            for scope in self.scopes.values():
                scope.cancel()

        self._run(cancel_all)


def machine_in(nursery: trio.Nursery, token: trio.lowlevel.TrioToken) -> type[SemaphoreMachine]:
    """A SemaphoreMachine class bound to this run: hypothesis builds machines with no arguments."""

    class BoundMachine(SemaphoreMachine):
        def __init__(self) -> None:
            super().__init__(nursery, token)

    return BoundMachine


async def test_semaphore_matches_reference_model() -> None:
    token = trio.lowlevel.current_trio_token()
    async with trio.open_nursery() as nursery:

        def run_machine() -> None:
            run_state_machine_as_test(
                machine_in(nursery, token),
                settings=settings(
                    max_examples=300,
                    stateful_step_count=40,
                    deadline=None,
                    suppress_health_check=[HealthCheck.too_slow],
                ),
            )

        await trio.to_thread.run_sync(run_machine)
