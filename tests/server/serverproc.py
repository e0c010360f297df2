"""Helpers of the server tests: a small memory, and `asmr serve` run as a real process on a free port."""
from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
READ_KEY = "reader-key-0123456789abcdef"
WRITE_KEY = "writer-key-0123456789abcdef"
FILE_KEY = "file-reader-key-fedcba9876543210"
READ = {"Authorization": f"Bearer {READ_KEY}"}
WRITE = {"Authorization": f"Bearer {WRITE_KEY}"}


def build_memory(directory: Path) -> Path:
    """examples/handbook with the hashing embedder (no model: fast)."""
    from asmr.store.writer import ingest
    from asmr.units.read import read_path

    root = EXAMPLES / "handbook"
    ingest(directory, [read_path(p, root=root) for p in sorted(root.rglob("*.md"))], embedder="hash-256",
           progress=False)
    return directory


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``python -m asmr.cli serve`` on a free loopback port; its output goes to ``log``."""

    def __init__(self, memory: Path, log: Path, *args: str, keys: str | None = None, workers: int = 1):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        env = {k: v for k, v in os.environ.items() if k != "ASMR_API_KEYS"}
        env["HF_HUB_OFFLINE"] = "1"
        env["PYTHONPATH"] = str(ROOT / "python") + os.pathsep + env.get("PYTHONPATH", "")
        if keys is not None:
            env["ASMR_API_KEYS"] = keys
        cmd = [sys.executable, "-m", "asmr.cli", "serve", "--memory", str(memory), "--port", str(self.port),
               "--workers", str(workers), "--confidence-threshold", "0.05", *args]
        self._out = open(log, "wb")
        self.proc = subprocess.Popen(cmd, stdout=self._out, stderr=subprocess.STDOUT, env=env, cwd=ROOT)

    def wait(self, timeout: float = 60.0) -> "Server":
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"asmr serve exited with {self.proc.returncode}: {self.log.read_text()[-2000:]}")
            try:
                if httpx.get(self.url + "/healthz", timeout=2).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        self.stop()
        raise RuntimeError(f"asmr serve did not start in {timeout} s: {self.log.read_text()[-2000:]}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._out.close()
