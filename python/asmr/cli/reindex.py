"""``asmr reindex``: batch re-indexing (``asmr.reindex``) of many documents."""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .common import (CHAT_SUFFIXES, EXIT_BAD_INPUT, EXIT_OK, EXIT_SKIPPED, INPUT_SUFFIXES, document_args,
                     fail, iter_inputs, memory_arg, memory_dir, read_inputs)

DESCRIPTION = """\
Re-index many documents: read, chunk and embed them in parallel, then commit them to the
memory in one transaction with the same ids, versions and lifecycle as `asmr ingest`
(unchanged units keep their ids, changed ones supersede, removed ones are deprecated).

Stage 1 embeds only texts the memory has not embedded yet and writes the vectors as shards
to a work directory (default <memory>/.reindex/<model>). Stage 2 reads the inputs again and
ingests them with those vectors. A run that fails or is interrupted keeps its finished
shards: run the same command again and it resumes where it stopped. The work directory is
removed after a successful commit.

--backend local embeds in this process. --backend ray runs stage 1 on Ray Data: tasks read
and chunk the inputs, a pool of --workers actors embeds (one GPU each when the cluster has
GPUs), the driver writes the shards (no shared file system needed). It joins the cluster at
--ray-address or $RAY_ADDRESS, else starts a local Ray.
"""

EPILOG = """\
examples:
  asmr reindex docs/ corpus.jsonl --memory mem                 # in this process
  asmr reindex corpus.jsonl --memory mem --backend ray --workers 4
  asmr reindex --format chat chats/ --memory mem               # conversations, as asmr ingest --format chat
  RAY_ADDRESS=ray://head:10001 asmr reindex /data/corpus --backend ray --batch-size 1024

Exit codes: 0 ok, 2 bad input (nothing was written; --skip-bad ingests the rest and exits 2),
4 memory unusable, 130 interrupted (the memory is unchanged; run again to resume).
"""


def add_reindex(sub) -> None:
    """``asmr reindex``."""
    p = sub.add_parser("reindex", help="re-index many documents in parallel (local processes or a Ray cluster)",
                       description=DESCRIPTION, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("sources", nargs="+", metavar="SOURCE",
                   help="files or directories (searched for " + ", ".join(INPUT_SUFFIXES) + ")")
    memory_arg(p)
    g = p.add_argument_group("documents (as for asmr ingest)")
    document_args(g, "the time of the commit", chat=True)
    g.add_argument("--join-turns", action=argparse.BooleanOptionalAction, default=True,
                   help="--format chat: consecutive short turns (up to 12 words) of one speaker make one "
                        "unit (default); --no-join-turns makes every turn a unit of its own")
    g = p.add_argument_group("parallel embedding")
    g.add_argument("--backend", choices=("local", "ray"), default="local",
                   help="local: this process; ray: Ray Data on a local or remote cluster (default: local)")
    g.add_argument("--batch-size", type=int, default=256, metavar="N",
                   help="texts per embedding call (default: 256; larger on GPUs, e.g. 1024)")
    g.add_argument("--work-dir", type=Path, default=None, metavar="DIR",
                   help="where shards go between the stages (default: <memory>/.reindex/<model>)")
    g.add_argument("--shard-units", type=int, default=None, metavar="N",
                   help="vectors per shard: what an interrupted run can lose at most (default: 8192)")
    g.add_argument("--device", choices=("auto", "cpu", "cuda"), default="auto",
                   help="where the embedding runs (default: auto: on Ray, GPUs when the cluster has them; "
                        "locally, the CPU). cuda: all-MiniLM-L6-v2 on this machine's GPU, or one GPU an actor")
    g = p.add_argument_group("ray backend")
    g.add_argument("--ray-address", default=None, metavar="ADDR",
                   help="cluster to join, e.g. ray://head:10001 or auto (default: $RAY_ADDRESS, else a local Ray)")
    g.add_argument("--workers", type=int, default=None, metavar="N",
                   help="embedding actors (default: one per GPU, else one per 2 CPUs; hash models: per CPU)")
    g.add_argument("--cpus-per-worker", type=float, default=None, metavar="N",
                   help="CPUs each actor reserves (default: the cluster's CPUs shared among the workers)")
    g.add_argument("--num-cpus", type=int, default=None, metavar="N",
                   help="CPUs of a Ray started by this command (default: all)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument("--no-progress", action="store_true", help="no progress bars")
    p.set_defaults(handler=cmd_reindex, check_combination=lambda args: _check_flags(p, args))


def _check_flags(parser, args) -> None:
    if not args.join_turns and args.fmt != "chat":
        parser.error("--no-join-turns: only with --format chat (other documents have no turns)")


def cmd_reindex(args) -> int:
    """Run ``asmr reindex``; returns the exit code."""
    from ..embed import check_embedder_name
    from ..units.model import InputError
    from ..units.read import check_date
    from ..reindex.run import SHARD_UNITS, NoDocuments, ReindexOptions, reindex
    from ..reindex.tasks import ReadOptions

    try:
        if args.effective_date:
            check_date("--effective-date", args.effective_date)
        if args.embedder:
            check_embedder_name(args.embedder)
        for flag, value, low in (("--flat-max", args.flat_max, 0), ("--batch-size", args.batch_size, 1),
                                 ("--shard-units", args.shard_units, 1), ("--workers", args.workers, 1),
                                 ("--num-cpus", args.num_cpus, 1)):
            if value is not None and value < low:
                raise ValueError(f"{flag} {value}: must be >= {low}")
        if args.cpus_per_worker is not None and args.cpus_per_worker <= 0:
            raise ValueError(f"--cpus-per-worker {args.cpus_per_worker}: must be > 0")
        if args.backend == "local":
            used = [f for f, v in (("--ray-address", args.ray_address), ("--workers", args.workers),
                                   ("--cpus-per-worker", args.cpus_per_worker), ("--num-cpus", args.num_cpus))
                    if v is not None]
            if used:
                raise ValueError(f"{', '.join(used)}: only with --backend ray")
        if args.backend == "ray":
            try:
                import ray  # noqa: F401
                import ray.data  # noqa: F401
            except ImportError as exc:
                raise ValueError(f"--backend ray needs Ray Data (pip install 'ray[data]'): {exc}") from None
    except ValueError as exc:
        return fail(str(exc), EXIT_BAD_INPUT)

    from ..store import DEFAULT_KB
    options = ReindexOptions(
        backend=args.backend, kb=args.kb or DEFAULT_KB,
        read=ReadOptions(errors=args.errors, doc_type=args.doc_type, fmt=args.fmt, join_turns=args.join_turns,
                         default_date=args.effective_date),
        effective_date=args.effective_date, skip_bad=args.skip_bad, embedder=args.embedder,
        batch_size=args.batch_size, shard_units=args.shard_units or SHARD_UNITS, work_dir=args.work_dir,
        flat_max=args.flat_max, progress=False if args.no_progress else None, ray_address=args.ray_address,
        workers=args.workers, device=args.device, cpus_per_worker=args.cpus_per_worker, num_cpus=args.num_cpus)
    try:
        suffixes = CHAT_SUFFIXES if args.fmt == "chat" else INPUT_SUFFIXES  # what a directory is searched for
        report = reindex(memory_dir(args), args.sources, options, read_inputs,
                         lambda paths: iter_inputs(paths, suffixes=suffixes))
    except NoDocuments as exc:
        return fail(str(exc), EXIT_BAD_INPUT)
    except InputError as exc:
        print(f"asmr reindex: {exc}", file=sys.stderr)
        return fail("nothing was written (--skip-bad ingests the good inputs and reports the bad; "
                     "vectors embedded so far are kept for the next run)", EXIT_BAD_INPUT)
    except KeyboardInterrupt:
        print("asmr reindex: interrupted; finished shards are kept: run the same command again to resume",
              file=sys.stderr)
        raise
    except ValueError as exc:  # --device cuda without GPUs, and the like
        return fail(str(exc), EXIT_BAD_INPUT)

    ing = report.ingest
    if not ing.documents and not report.bad_inputs:
        return fail("no documents found in " + ", ".join(args.sources), EXIT_BAD_INPUT)
    if args.json:
        print(json.dumps(report.to_dict(), indent=2))
    else:
        c = ing.counts()
        changes = [f"{sum(getattr(d, k) for d in ing.documents)} {k}"
                   for k in ("added", "kept", "superseded", "deprecated")]
        t = report.timings
        rate = report.embedded / t["embed"] if t.get("embed") else 0.0
        print(f"{len(ing.documents)} documents: {c['new']} new, {c['revised']} revised, {c['unchanged']} "
              f"unchanged; units {', '.join(changes)}; {ing.active_units} active units")
        print(f"embedding ({report.embed_model}, {args.backend}, {report.workers} worker(s), {report.device}): "
              f"{report.embedded} texts "
              f"in {t.get('embed', 0):.2f} s ({rate:.0f}/s), {report.resumed} from an earlier run, "
              f"{ing.reused_vectors} vectors reused from the memory; commit {t.get('commit', 0):.2f} s; "
              f"total {t.get('total', 0):.2f} s")
        if report.misses:
            print(f"asmr reindex: {report.misses} text(s) were not in the shards and were embedded at commit "
                  "(an input changed during the run?)", file=sys.stderr)
    if report.bad_inputs:
        print(f"asmr reindex: {len(report.bad_inputs)} bad input(s) skipped", file=sys.stderr)
    return (EXIT_SKIPPED if ing.documents else EXIT_BAD_INPUT) if report.bad_inputs else EXIT_OK
