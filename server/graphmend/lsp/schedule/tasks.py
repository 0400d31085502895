"""At most one pending task per key (a document's uri): a newer request cancels the one it
replaces, and waits out its debounce first. A failure is reported, never raised: the previous
diagnostics stay and the server keeps serving."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable


class KeyedTasks:
    def __init__(self, on_error: Callable[[Exception], None]) -> None:
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._on_error = on_error

    def restart(self, key: str, work: Callable[[], Awaitable[None]], delay_s: float = 0) -> None:
        """Run `work` as the task for `key` once `delay_s` has passed, cancelling the task it replaces
        (`work` is called only then: a cancelled debounce leaves no coroutine behind)."""
        self.cancel(key)
        self._tasks[key] = asyncio.get_running_loop().create_task(self._run(key, work, delay_s))

    def cancel(self, key: str) -> None:
        task = self._tasks.pop(key, None)
        if task is not None:
            task.cancel()

    def get(self, key: str) -> asyncio.Task[None] | None:
        return self._tasks.get(key)

    def __contains__(self, key: str) -> bool:
        return key in self._tasks

    async def _run(self, key: str, work: Callable[[], Awaitable[None]], delay_s: float) -> None:
        try:
            if delay_s:
                await asyncio.sleep(delay_s)
            await work()
        except asyncio.CancelledError:
            pass
        except Exception as error:  # noqa: BLE001
            self._on_error(error)
        finally:
            if self._tasks.get(key) is asyncio.current_task():
                del self._tasks[key]
