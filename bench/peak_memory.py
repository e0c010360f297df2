"""Peak memory of a process tree, sampled: what a benchmark's child and the processes it starts hold together."""
from __future__ import annotations

import threading

import psutil


class PeakMemory:
    """Samples the summed PSS (RSS where PSS is unreadable) of a process and its descendants."""

    def __init__(self, pid: int, interval: float = 0.25):
        self.root = psutil.Process(pid)
        self.interval = interval
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> "PeakMemory":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set():
            total = 0
            try:
                procs = [self.root, *self.root.children(recursive=True)]
            except psutil.Error:
                procs = []
            for p in procs:
                try:
                    info = p.memory_full_info()
                    total += getattr(info, "pss", 0) or info.rss
                except psutil.Error:
                    pass
            self.peak = max(self.peak, total)
            self._stop.wait(self.interval)
