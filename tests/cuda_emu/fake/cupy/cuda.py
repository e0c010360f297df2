"""cupy.cuda for the NumPy stand-in: one device, the null stream, wall-clock events."""

import time


class _Stream:
    ptr = 0


class Device:
    def __init__(self, device=None):
        self.id = 0 if device is None else int(device)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def synchronize(self):
        pass


def get_current_stream():
    return _Stream()


class Event:
    def record(self, stream=None):
        self.t = time.perf_counter()

    def synchronize(self):
        pass


def get_elapsed_time(start, end):
    return 1e3 * (end.t - start.t)


class runtime:
    @staticmethod
    def getDeviceProperties(device):
        return {"name": b"CPU emulation"}
