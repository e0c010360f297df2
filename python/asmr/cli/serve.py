"""``asmr serve``: start the HTTP face (``asmr.server``) over a memory."""
from __future__ import annotations

import argparse
import os
import signal
import sys

from . import remote
from .common import (EXIT_BAD_INPUT, EXIT_MEMORY, EXIT_OK, fail, generator_args, memory_arg, memory_dir,
                     retrieve_args, retrieve_config)

DESCRIPTION = """\
Serve a memory over HTTP (FastAPI on uvicorn): POST /v1/search, /v1/answer, /v1/verify,
/v1/ingest, /v1/chat/completions (OpenAI-compatible, streaming), GET /v1/units/{id},
/v1/models, /healthz, /metrics; the OpenAPI document at /openapi.json, docs at /docs.

API keys are bearer tokens with scope read or write: ASMR_API_KEYS=KEY,KEY:write (an entry
without a suffix reads) and/or --api-keys FILE ('KEY [read|write]' a line, # comments); a key
is 16 to 256 printable characters without spaces or commas (a shorter one stops the start).
With no key, reads are open and writes are refused; with keys, every route but /healthz,
/docs and /openapi.json (they describe the API, not the memory) needs one and ingest needs
write scope. Keys are never printed or logged. /docs loads Swagger UI from a CDN (it needs
the internet); offline, read /openapi.json.

While it runs, the server leaves <memory>/server.json (its URL and process id): `asmr search`
and `asmr ask` on the same memory send their question to it instead of loading the models
again (with the key in ASMR_API_KEY when the server needs one).
"""

EPILOG = """\
example:
  ASMR_API_KEYS=$(cat reader.key),$(cat writer.key):write asmr serve --memory ./asmr-memory
  curl -s localhost:8000/v1/search -H "Authorization: Bearer $(cat reader.key)" \\
       -H 'content-type: application/json' -d '{"question": "Which port does the API use?"}'
"""


def add_serve(sub) -> None:
    """``asmr serve``."""
    p = sub.add_parser("serve", help="serve a memory over HTTP (search, answer, verify, ingest, OpenAI chat)",
                       description=DESCRIPTION, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    memory_arg(p)
    p.add_argument("--host", default="127.0.0.1",
                   help="address to bind (default 127.0.0.1, loopback only; 0.0.0.0 exposes it to the network)")
    p.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    p.add_argument("--workers", type=int, default=1, metavar="N",
                   help="worker processes (default 1); each serves the newest commit within --poll-seconds; "
                        "conversations are shared by all (<memory>/conversations.sqlite); rate limits and "
                        "metrics are per worker")
    p.add_argument("--api-keys", metavar="FILE", default=None,
                   help="API key file: one 'KEY [read|write]' a line (added to ASMR_API_KEYS)")
    g = p.add_argument_group("answering")
    generator_args(g, "extractive", "default generator of /v1/answer and the 'asmr' model (default extractive: "
                                    "no model, fast; local: SmolLM2, loaded on first use)")
    g.add_argument("--redundancy", choices=("off", "list", "full"), default="list",
                   help="key-fact block after the sources (default list)")
    g.add_argument("--no-audit", action="store_true", help="do not append audit records to <memory>/audit")
    g.add_argument("--remember-conversations", action="store_true",
                   help="write every answered turn of /v1/answer and /v1/chat/completions into the memory: "
                        "the question and the sentences of the answer the memory confirmed, as document "
                        "conversation.<id> of kb (one ingest a turn; any key that may ask may then write "
                        "them); a request sends \"remember\": false to keep its turn out (default: off)")
    lim = p.add_argument_group("limits")
    lim.add_argument("--max-body", type=int, default=10 * 1024 * 1024, metavar="BYTES",
                     help="largest request body (default 10 MiB; larger: 413)")
    lim.add_argument("--max-question", type=int, default=2000, metavar="CHARS",
                     help="longest question (default 2000)")
    lim.add_argument("--max-citations", type=int, default=64, metavar="N",
                     help="most citation markers in an answer sent to /v1/verify (default 64)")
    lim.add_argument("--max-documents", type=int, default=1000, metavar="N",
                     help="most documents in one /v1/ingest (default 1000)")
    lim.add_argument("--rate-limit", type=float, default=100.0, metavar="PER_SECOND",
                     help="requests per second per API key (clients that share a key share its rate), or "
                          "per client address without keys (default 100; 0: off); per worker")
    lim.add_argument("--burst", type=int, default=200, metavar="N", help="requests at once above the rate "
                                                                         "(default 200)")
    p.add_argument("--embedder", default=None,
                   help="embedding model if the first POST /v1/ingest creates the memory: all-MiniLM-L6-v2 "
                        "(default), multilingual-e5-small or hash-<dim>; an existing memory keeps its own")
    p.add_argument("--poll-seconds", type=float, default=0.2, metavar="S",
                   help="how often to look for commits by other processes (default 0.2; 0: never)")
    p.add_argument("--learn-every", type=float, default=300.0, metavar="S", dest="learn_seconds",
                   help="how often to fold the audit records written since the last fold into learned usage "
                        "edges, and serve them (default 300; 0: never; `asmr graph learn` does it by hand)")
    p.add_argument("--log-level", choices=("critical", "error", "warning", "info", "debug"), default="info")
    retrieve_args(p)
    # OpenMP threads (faiss's, the kernels') otherwise spin for a while after every parallel region:
    # between single-question searches that is idle CPU taken from the other requests and, on a small
    # machine, from the clients; measured here it doubled the server's CPU time per search
    p.set_defaults(handler=cmd_serve, environment={"OMP_WAIT_POLICY": "PASSIVE"})


def server_config(args):
    """The ServerConfig of the flags; raises ValueError naming the flag at fault."""
    from ..server.context import ServerConfig
    from ..server.limits import Limits

    cfg = retrieve_config(args)  # validates the retrieval flags
    retrieve = {name: getattr(cfg, name) for name in ("k", "seeds", "depth", "edge_threshold",
                                                      "confidence_threshold", "mix")
                if getattr(args, name) is not None}
    if retrieve.get("mix") is not None:
        retrieve["mix"] = list(cfg.mix)
    limits = dict(max_body_bytes=args.max_body, max_question_chars=args.max_question,
                  max_citations=args.max_citations, max_documents=args.max_documents,
                  rate=args.rate_limit, burst=args.burst)
    Limits(**limits)  # validates
    if not 0 < args.port < 65536:
        raise ValueError(f"--port {args.port}: must be in 1..65535")
    if args.workers < 1:
        raise ValueError(f"--workers {args.workers}: must be at least 1")
    if args.embedder:
        from ..embed import check_embedder_name
        check_embedder_name(args.embedder)
    if args.poll_seconds < 0:
        raise ValueError(f"--poll-seconds {args.poll_seconds}: must be >= 0")
    if not args.learn_seconds >= 0:  # also NaN
        raise ValueError(f"--learn-every {args.learn_seconds}: must be >= 0")
    return ServerConfig(memory=str(memory_dir(args)), generator=args.generator, base_url=args.base_url,
                        model=args.model, redundancy=args.redundancy, audit=not args.no_audit, retrieve=retrieve,
                        limits=limits, api_keys_file=args.api_keys, poll_seconds=args.poll_seconds,
                        learn_seconds=args.learn_seconds,
                        embedder=args.embedder, remember_conversations=args.remember_conversations)


def cmd_serve(args) -> int:
    """Start the server; returns the exit code when it stops."""
    import uvicorn

    from ..server.auth import ENV_VAR, KeyConfigError, KeyRing

    try:
        config = server_config(args)
        keys = KeyRing.load(os.environ.get(ENV_VAR), args.api_keys)
    except (ValueError, KeyConfigError) as exc:
        return fail(str(exc), EXIT_BAD_INPUT)
    if not keys.configured and args.host not in ("127.0.0.1", "localhost", "::1"):
        print(f"asmr serve: warning: no API keys and --host {args.host}: anyone who can reach this port can "
              "read the memory", file=sys.stderr)
    if os.path.exists(config.memory) and not os.path.isdir(config.memory):
        return fail(f"memory {config.memory}: exists and is not a directory", EXIT_MEMORY)
    if not os.path.isdir(config.memory):
        print(f"asmr serve: memory {config.memory} does not exist yet; the first POST /v1/ingest creates it",
              file=sys.stderr)
    common = dict(host=args.host, port=args.port, log_level=args.log_level, server_header=False)
    # the CLI on this machine finds the server through this file (asmr.cli.remote); gone when it stops
    announced = (remote.announce(config.memory, f"http://{_local_host(args.host)}:{args.port}")
                 if os.path.isdir(config.memory) else None)
    # uvicorn shuts down gracefully on SIGTERM, then raises the signal again for the handler it found:
    # the default one would end the process before the file is removed
    signal.signal(signal.SIGTERM, _exit_quietly)
    try:
        if args.workers == 1:
            from ..server.app import create_app
            uvicorn.run(create_app(config, keys=keys), **common)
        else:
            from ..server.context import CONFIG_ENV
            os.environ[CONFIG_ENV] = config.to_json()  # the workers' factory reads it
            uvicorn.run("asmr.server.app:app_from_env", factory=True, workers=args.workers, **common)
    finally:
        remote.withdraw(announced)
    return EXIT_OK


def _exit_quietly(signum, frame) -> None:
    raise SystemExit(EXIT_OK)


def _local_host(host: str) -> str:
    """How a client on this machine reaches a server bound to ``host`` (a wildcard: the loopback)."""
    if host in ("0.0.0.0", ""):
        return "127.0.0.1"
    if host == "::":
        return "[::1]"
    return f"[{host}]" if ":" in host else host
