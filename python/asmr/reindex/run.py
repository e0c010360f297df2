"""One re-index: plan tasks, embed what the memory lacks into shards, commit with ``Writer.ingest``.

Stages::

    1. embed   inputs -> tasks -> (read, chunk, drop known texts, embed) -> shards in the work dir
               (in this process, or on Ray); resumable: finished shards are skipped on a re-run
    2. commit  the inputs read again, in order, and ingested as ``asmr ingest`` would, with an
               embedder that serves the shards' vectors: same ids, versions, lifecycle, one
               transaction; then the work directory is removed

The memory's write lock is held from start to end, so nothing changes the memory between
deciding what to embed and committing it.
"""
from __future__ import annotations

import argparse
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
from tqdm import tqdm

from ..embed import DEFAULT_EMBEDDER, model_for_text
from ..embed.models import CHOICE_SAMPLE_CHARS
from ..store import DEFAULT_KB, IngestReport, Writer, stored_model
from ..units.ids import check_name
from .precomputed import PrecomputedEmbedder
from .shards import WorkDir, default_work_dir
from .tasks import KEY_DTYPE, ReadOptions, Task, plan_tasks, read_task

SHARD_UNITS = 8192  # vectors per shard: a few seconds of GPU work lost at most when a run dies
SHARD_SECONDS = 60.0  # and a shard at least this often, so a slow CPU run loses at most a minute
FAULT_ENV = "ASMR_REINDEX_FAULT"  # "shards=N": interrupt after N shards, for the resume tests


@dataclass
class ReindexOptions:
    """Everything a run needs besides the inputs and the memory."""
    backend: str = "local"  # "local" or "ray"
    kb: str = DEFAULT_KB
    read: ReadOptions = field(default_factory=ReadOptions)
    effective_date: str | None = None
    skip_bad: bool = False
    embedder: str | None = None  # None: the memory's model, else the one that reads the inputs' text
    batch_size: int = 256
    shard_units: int = SHARD_UNITS
    work_dir: Path | None = None
    flat_max: int | None = None
    progress: bool | None = None
    device: str = "auto"  # auto, cpu or cuda: locally auto is the CPU; on Ray, GPUs where the cluster has them
    # Ray only
    ray_address: str | None = None
    workers: int | None = None
    cpus_per_worker: float | None = None
    num_cpus: int | None = None  # CPUs of a Ray started here


@dataclass
class ReindexReport:
    """What a run did: the commit's IngestReport and the embedding stage's counts."""
    ingest: IngestReport
    tasks: int = 0
    embedded: int = 0  # texts embedded by this run's stage 1
    resumed: int = 0  # texts whose vectors an earlier, interrupted run had left in shards
    shards: int = 0  # shards written by this run
    misses: int = 0  # texts the commit had to embed itself (expected: 0)
    bad_inputs: list[str] = field(default_factory=list)
    embed_model: str = ""  # the memory's model: asked for, the memory's own, or chosen for the inputs' text
    workers: int = 1
    device: str = "cpu"
    timings: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {**self.ingest.to_dict(), "bad_inputs": self.bad_inputs,
                "reindex": {"tasks": self.tasks, "embedded": self.embedded, "resumed": self.resumed,
                            "shards": self.shards, "misses": self.misses, "workers": self.workers,
                            "device": self.device, "embed_model": self.embed_model,
                            "timings": {k: round(v, 3) for k, v in self.timings.items()}}}


class NoDocuments(Exception):
    """No input file was found under the given paths."""


class _ShardSink:
    """Collects (key, vector) batches from the stage and writes them as shards of ``units`` rows."""

    def __init__(self, work: WorkDir, units: int, bar: tqdm):
        self.work, self.units, self.bar = work, units, bar
        self.keys: list[str] = []
        self.vectors: list[np.ndarray] = []
        self.buffered = 0
        self.embedded = 0
        self.shards = 0
        self.last = time.monotonic()
        fault = os.environ.get(FAULT_ENV, "")
        self.fault_after = int(fault.split("=", 1)[1]) if fault.startswith("shards=") else None

    def __call__(self, keys: list[str], vectors: np.ndarray) -> None:
        if not len(keys):
            return
        self.keys.extend(keys)
        self.vectors.append(vectors)
        self.buffered += len(keys)
        self.embedded += len(keys)
        self.bar.update(len(keys))
        while self.buffered >= self.units:  # Ray may hand over many batches coalesced into one block
            self.flush(self.units)
        if self.buffered and time.monotonic() - self.last >= SHARD_SECONDS:
            self.flush()

    def flush(self, rows: int | None = None) -> None:
        """Write the first ``rows`` buffered vectors (all by default) as one shard."""
        if not self.buffered:
            return
        vectors = np.concatenate(self.vectors) if len(self.vectors) > 1 else self.vectors[0]
        rows = min(rows or self.buffered, self.buffered)
        self.work.write(self.keys[:rows], vectors[:rows])
        self.keys, self.vectors, self.buffered = self.keys[rows:], [vectors[rows:]], self.buffered - rows
        self.shards += 1
        self.last = time.monotonic()
        if self.fault_after is not None and self.shards >= self.fault_after:
            raise KeyboardInterrupt(f"{FAULT_ENV}: interrupted after {self.shards} shard(s)")


# Tasks read for the choice of a new memory's model, spread evenly over the inputs.
CHOICE_TASKS = 256


def _model_for(tasks: Sequence[Task], read: ReadOptions) -> str:
    """The model of a new memory of these inputs when none is asked for, as ``asmr ingest`` chooses it
    (``embed.model_for_text``): from the first documents of tasks spread over the inputs, an even share
    of ``CHOICE_SAMPLE_CHARS`` from each; bad inputs are left to the run."""
    chosen = tasks[::-(-len(tasks) // CHOICE_TASKS)]
    texts = []
    for task in chosen:
        room = CHOICE_SAMPLE_CHARS // len(chosen)
        for document in read_task(task, read, lambda error: None):
            texts.append(document.text[:room])
            room -= len(texts[-1])
            if room <= 0:
                break
    return model_for_text(texts)[0]


def reindex(memory: Path, sources: Sequence[str], options: ReindexOptions,
            read_inputs: Callable[[argparse.Namespace, list[str]], object],
            iter_inputs: Callable[[list[str]], object]) -> ReindexReport:
    """Re-index ``sources`` into ``memory``; returns the report.

    ``read_inputs``/``iter_inputs`` are the command line's input readers (``asmr ingest``'s), so
    that both commands walk directories and name bad inputs identically. Raises InputError for
    bad input in strict mode (nothing written; finished shards are kept for the next run),
    NoDocuments when no input file exists, MemoryStateError when the memory cannot be used.
    """
    clock: dict[str, float] = {}
    t0 = time.perf_counter()
    check_name(options.kb, "knowledge base")
    have_model, have_dim = stored_model(memory)
    inputs = list(iter_inputs(list(sources)))
    tasks = plan_tasks(inputs, options.read)
    if not tasks:
        raise NoDocuments("no documents found in " + ", ".join(sources))
    model = options.embedder or have_model or _model_for(tasks, options.read)
    device = local_device(options.device, model) if options.backend == "local" else None
    work = WorkDir(options.work_dir or default_work_dir(memory, model), model)

    from .local import load_embedder

    pre = PrecomputedEmbedder(model, None, lambda: load_embedder(model), dim=have_dim)
    writer_options = {} if options.flat_max is None else {"flat_max": options.flat_max}
    with Writer(memory, embedder=pre, progress=options.progress, **writer_options) as writer:
        kept = work.prepare()
        skip_units = _known_hashes(writer)
        skip_texts = work.done_keys()
        report = ReindexReport(IngestReport(), tasks=len(tasks), resumed=len(skip_texts), embed_model=model)
        clock["plan"] = time.perf_counter() - t0
        if kept:
            print(f"asmr reindex: resuming: {len(skip_texts)} texts already embedded in {kept} shard(s) "
                  f"in {work.path}", file=sys.stderr)

        def on_error(message: str) -> None:
            # strict: stop before embedding more; --skip-bad: the commit's read reports it, once, in order
            if not options.skip_bad:
                from ..units.model import InputError
                raise InputError(message)

        show = options.progress if options.progress is not None else sys.stderr.isatty()
        t = time.perf_counter()
        with tqdm(desc="embed", unit="unit", disable=not show, file=sys.stderr, leave=False,
                  mininterval=0.5) as bar:
            sink = _ShardSink(work, options.shard_units, bar)
            try:
                if options.backend == "ray":
                    report.workers, report.device, clock["ray_start"] = _run_ray(
                        tasks, options, skip_units, skip_texts, model, sink, on_error)
                else:
                    from .local import embed_local
                    report.device = device
                    embed_local(tasks, options.read, skip_units, skip_texts, lambda: load_embedder(model, device),
                                batch_size=options.batch_size, sink=sink, on_error=on_error)
            finally:
                try:
                    sink.flush()  # what reached the driver is kept, also on failure
                except KeyboardInterrupt:
                    pass
        report.embedded, report.shards = sink.embedded, sink.shards
        clock["embed"] = time.perf_counter() - t - clock.get("ray_start", 0.0)  # the stage, less joining Ray

        t = time.perf_counter()
        pre.set_table(work.table())
        errors: list[str] = []
        ns = argparse.Namespace(command="reindex", paths=list(sources), skip_bad=options.skip_bad,
                                fmt=options.read.fmt, errors=options.read.errors, doc_type=options.read.doc_type,
                                effective_date=options.effective_date, join_turns=options.read.join_turns)
        report.ingest = writer.ingest(read_inputs(ns, errors), kb=options.kb, effective_date=options.effective_date)
        report.bad_inputs = errors
        report.misses = pre.misses
        clock["commit"] = time.perf_counter() - t
    work.remove()  # committed: the shards are in the memory now
    clock["total"] = time.perf_counter() - t0
    report.timings = clock
    return report


def local_device(device: str, model: str) -> str:
    """Where the local backend embeds: the CPU, unless ``device`` is "cuda" ("auto" keeps the CPU, so that
    a memory's vectors do not change runtime unasked). Raises ValueError when the GPU cannot be used."""
    if device != "cuda":
        return "cpu"
    if model != DEFAULT_EMBEDDER:
        raise ValueError(f"--device cuda: only {DEFAULT_EMBEDDER} runs on a GPU here; {model} runs on the CPU")
    try:
        import torch
    except ImportError:
        raise ValueError("--device cuda needs torch with CUDA (pip install torch)") from None
    if not torch.cuda.is_available():
        raise ValueError("--device cuda: torch sees no CUDA device on this machine")
    return "cuda"


def _known_hashes(writer: Writer) -> np.ndarray:
    """Sorted content hashes of every unit the memory holds: their vectors are copied, not embedded."""
    hashes = writer.content_hashes()
    return np.sort(np.array(hashes, KEY_DTYPE)) if hashes else np.empty(0, KEY_DTYPE)


def _run_ray(tasks: list[Task], options: ReindexOptions, skip_units, skip_texts, model: str, sink,
             on_error) -> tuple[int, str, float]:
    """(workers, device, seconds spent starting or joining Ray) of the stage run on Ray."""
    from . import ray_backend

    t = time.perf_counter()
    started = ray_backend.connect(options.ray_address, options.num_cpus)
    startup = time.perf_counter() - t
    try:
        layout = ray_backend.plan(model, workers=options.workers, device=options.device,
                                  cpus_per_worker=options.cpus_per_worker, batch_size=options.batch_size)
        ray_backend.embed_ray(tasks, options.read, skip_units, skip_texts, model, layout, sink=sink,
                              on_error=on_error)
        return layout.workers, layout.device, startup
    finally:
        if started:
            import ray
            ray.shutdown()
