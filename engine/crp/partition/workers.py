"""The partitioner's worker processes: forked, so they inherit the graphs to split
without a copy, and stopped with SIGKILL on cancel.

Not threads: pymetis holds the GIL, and METIS draws from libc's one global rand(),
so threads would neither overlap nor stay deterministic. Not multiprocessing.Pool:
its terminate() sends SIGTERM, which METIS traps while it runs (GKlib's gk_sigtrap
longjmps back into the call), so a worker cancelled inside METIS lived on,
orphaned; and killing a Pool's workers harder can leave its queue lock held
forever. Here each worker reads tasks from one queue and answers on one pipe; the
parent feeds a few tasks ahead, polls the pipe every POLL_S (so a cancel is seen
within that even while a long METIS call runs), and on cancel or error kills
every worker.
"""
from __future__ import annotations

import multiprocessing
import threading

from engine.core.cores import usable_cores
from engine.core.progress import Cancelled

POLL_S = 0.05
AHEAD = 2                   # tasks queued per worker beyond the one it runs

# What the workers read, by name: set before they fork, inherited by them; a
# LevelGraph's order, rank and part live in shared memory, so they stay current.
_SHARED: dict = {}
_ONE_AT_A_TIME = threading.Lock()      # one partition per process uses _SHARED at a time


def shared(name: str):
    """What the workers were given under ``name``."""
    return _SHARED[name]


def default_workers() -> int:
    return usable_cores()


def check_cancel(cancel) -> None:
    if cancel is None:
        return
    if hasattr(cancel, "check"):
        cancel.check()
    elif callable(cancel) and cancel():
        raise Cancelled("cancelled")


class Workers:
    """``count`` forked worker processes that run tasks on the named objects (a
    context manager); none for ``count`` <= 1 or where fork is absent, and the
    tasks run in this process."""

    def __init__(self, count: int, graphs: dict):
        _ONE_AT_A_TIME.acquire()
        self.procs = []
        try:
            _SHARED.clear()
            _SHARED.update(graphs)
            self.count = count if "fork" in multiprocessing.get_all_start_methods() else 1
            if self.count > 1:
                ctx = multiprocessing.get_context("fork")
                self.tasks = ctx.SimpleQueue()
                self.answers, sender = ctx.Pipe(duplex=False)
                lock = ctx.Lock()
                self.procs = [ctx.Process(target=_serve, args=(self.tasks, sender, lock),
                                          daemon=True) for _ in range(self.count)]
                for p in self.procs:
                    p.start()
                sender.close()
        except BaseException:
            self._stop(clean=False)
            raise

    def __enter__(self):
        return self

    def __exit__(self, exc_type, *exc):
        self._stop(clean=exc_type is None)

    def _stop(self, clean: bool) -> None:
        try:
            if clean:
                for _ in self.procs:
                    self.tasks.put(None)        # each worker takes one and exits
            for p in self.procs:
                if not clean:
                    p.kill()                    # SIGKILL: see the module docstring
                p.join()
        finally:
            _SHARED.clear()
            _ONE_AT_A_TIME.release()

    def map(self, fn, tasks, cancel, report=None) -> list:
        """``fn`` over ``tasks``, results in task order, checking ``cancel`` while
        they run; ``report(done)`` gets the count of finished tasks."""
        tasks = list(tasks)
        out = [None] * len(tasks)
        if not self.procs:
            for i, task in enumerate(tasks):
                check_cancel(cancel)
                out[i] = fn(task)
                if report is not None:
                    report(i + 1)
            return out
        sent = done = 0
        while done < len(tasks):
            while sent < len(tasks) and sent - done < self.count * (1 + AHEAD):
                self.tasks.put((sent, fn, tasks[sent]))
                sent += 1
            check_cancel(cancel)
            if not self.answers.poll(POLL_S):
                continue
            i, ok, value = self.answers.recv()
            if not ok:
                raise value
            out[i] = value
            done += 1
            if report is not None:
                report(done)
        return out


def _serve(tasks, answers, lock) -> None:
    """A worker: run tasks until the sentinel None; answer (index, ok, result or error)."""
    while True:
        job = tasks.get()
        if job is None:
            return
        i, fn, task = job
        try:
            answer = (i, True, fn(task))
        except Exception as e:            # the parent raises it
            answer = (i, False, e)
        with lock:
            answers.send(answer)
