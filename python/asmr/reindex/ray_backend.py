"""The embedding stage on Ray Data: tasks read and chunked by Ray tasks, texts embedded by an actor pool.

The pipeline::

    tasks (from_items) -> chunk: read, chunk, drop known texts (CPU tasks)
                       -> embed: a pool of actors, each holding the model (one GPU each, if any)
                       -> the driver: (key, vector) batches written as shards

On a CPU-only cluster both steps ask for the same CPUs, and Ray Data fuses them into the
actors (no copy of texts between processes). With GPUs, chunking runs on the CPUs while the
GPU actors embed. The driver writes the shards, not the workers: so the cluster needs no
shared file system, and a shard on disk always means vectors that reached the driver.
"""
from __future__ import annotations

import dataclasses
import json
import logging
import os
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from .local import load_embedder
from .tasks import ReadOptions, Task, task_texts


@dataclass(frozen=True, slots=True)
class RayPlan:
    """How the stage is laid out on the cluster."""
    workers: int  # embedding actors
    device: str  # "cuda" or "cpu"
    cpus_per_worker: float
    batch_size: int


def connect(address: str | None, num_cpus: int | None) -> bool:
    """Join the cluster at ``address`` (else $RAY_ADDRESS), or start a local Ray; True if this call started it.

    An already initialised Ray (a test's, a notebook's) is used as it is.
    """
    import ray

    if ray.is_initialized():
        return False
    address = address or os.environ.get("RAY_ADDRESS") or None
    quiet = {"logging_level": logging.WARNING, "log_to_driver": False}
    if address:
        ray.init(address=address, **quiet)
    else:
        ray.init(num_cpus=num_cpus, include_dashboard=False, **quiet)
    return True


def plan(model: str, *, workers: int | None, device: str, cpus_per_worker: float | None,
         batch_size: int) -> RayPlan:
    """Workers and their resources from what the cluster has: one actor per GPU, else CPUs shared out."""
    import ray

    resources = ray.cluster_resources()
    gpus = int(resources.get("GPU", 0))
    cpus = max(1, int(resources.get("CPU", 1)))
    hashing = model.startswith("hash-")  # no model weights: nothing a GPU speeds up
    if device == "cuda" and gpus == 0:
        raise ValueError("--device cuda: the Ray cluster has no GPUs")
    use_gpu = device == "cuda" or (device == "auto" and gpus > 0 and not hashing)
    if use_gpu:
        n = workers or gpus
        return RayPlan(n, "cuda", cpus_per_worker or 1, batch_size)
    n = workers or max(1, cpus // (1 if hashing else 2))  # the model makes good use of two threads a worker
    return RayPlan(n, "cpu", cpus_per_worker or max(1, cpus // n), batch_size)


def _chunk(batch: dict, *, options: dict, skips: list) -> dict:
    """Ray Data step: tasks in, one row per text to embed (key, text) or per bad input (error)."""
    import ray

    skip_units, skip_texts = ray.get(skips[0]), ray.get(skips[1])  # zero-copy from the object store
    read = ReadOptions(**options)
    keys: list[str] = []
    texts: list[str] = []
    errors: list[str] = []
    for raw in batch["task"]:
        d = json.loads(raw)
        task = Task(files=tuple(tuple(f) for f in d["files"]), jsonl=d["jsonl"], start=d["start"],
                    stop=d["stop"], first_line=d["first_line"])
        k, t, e = task_texts(task, read, skip_units, skip_texts)
        keys += k
        texts += t
        errors += e
    blank = [""] * len(errors)
    return {"key": np.array(keys + blank, object), "text": np.array(texts + blank, object),
            "error": np.array([""] * len(keys) + errors, object)}


class _Embed:
    """Ray Data actor: holds the model; embeds the distinct texts of a batch, passes errors through."""

    def __init__(self, model: str, device: str, threads: int):
        # The CPUs Ray gave this actor, not the whole node's: a node of 16 cores runs 8 actors.
        self.embedder = load_embedder(model, device, threads=max(1, threads))
        if device == "cpu" and getattr(self.embedder, "runtime", "") == "torch":
            import torch

            torch.set_num_threads(max(1, threads))

    def __call__(self, batch: dict) -> dict:
        ok = batch["error"] == ""
        unique = dict(zip(batch["key"][ok], batch["text"][ok]))
        vectors = self.embedder.embed(list(unique.values()))
        bad = [str(e) for e in batch["error"][~ok]]
        if bad:
            vectors = np.concatenate([vectors, np.zeros((len(bad), vectors.shape[1]), np.float32)])
        return {"key": np.array([*unique, *[""] * len(bad)], object), "vector": vectors,
                "error": np.array([""] * len(unique) + bad, object)}


def embed_ray(tasks: Sequence[Task], options: ReadOptions, skip_units: np.ndarray, skip_texts: np.ndarray,
              model: str, layout: RayPlan, *, sink: Callable[[list[str], np.ndarray], None],
              on_error: Callable[[str], None]) -> None:
    """Run the stage on the connected Ray cluster; the driver hands batches to ``sink`` as they arrive."""
    import ray
    import ray.data

    if not tasks:
        return
    ctx = ray.data.DataContext.get_current()
    saved = ctx.enable_progress_bars, ctx.print_on_execution_start
    ctx.enable_progress_bars = False  # the command shows its own bar, in units
    ctx.print_on_execution_start = False
    logging.getLogger("ray.data").setLevel(logging.ERROR)  # "progress bars disabled" and the like
    skips = [ray.put(np.ascontiguousarray(skip_units)), ray.put(np.ascontiguousarray(skip_texts))]
    items = [{"task": json.dumps(dataclasses.asdict(t))} for t in tasks]
    ds = ray.data.from_items(items, override_num_blocks=min(len(items), 4096))
    cpus = layout.cpus_per_worker
    ds = ds.map_batches(_chunk, batch_size=1, batch_format="numpy", num_cpus=1 if layout.device == "cuda" else cpus,
                        fn_kwargs={"options": dataclasses.asdict(options), "skips": skips})
    remote = {"num_gpus": 1, "num_cpus": cpus} if layout.device == "cuda" else {"num_cpus": cpus}
    ds = ds.map_batches(_Embed, batch_size=layout.batch_size, batch_format="numpy",
                        compute=ray.data.ActorPoolStrategy(size=layout.workers),
                        fn_constructor_kwargs={"model": model, "device": layout.device,
                                               "threads": int(max(1, cpus))}, **remote)
    batches = ds.iter_batches(batch_size=None, batch_format="numpy")
    try:
        for batch in batches:
            ok = batch["error"] == ""
            for message in batch["error"][~ok]:
                on_error(str(message))
            if ok.any():
                sink([str(k) for k in batch["key"][ok]], np.asarray(batch["vector"][ok], np.float32))
    finally:
        close = getattr(batches, "close", None)
        if close is not None:
            close()  # stops the streaming executor and its actors when the stage ends early
        ctx.enable_progress_bars, ctx.print_on_execution_start = saved  # a caller's Ray session is theirs
