"""``asmr graph learn``, ``show`` and ``forget``: the unit graph, and the edges it learns from use."""
from __future__ import annotations

import json
from datetime import datetime, timezone

from .common import EXIT_BAD_INPUT, EXIT_NOT_FOUND, EXIT_OK, fail, memory_arg, memory_dir


def add_graph(sub) -> None:
    """``asmr graph``."""
    p = sub.add_parser("graph", help="the unit graph: learn edges from verified answers, show a unit's edges",
                       description="Usage edges link units that kept citations of verified answers cite "
                                   "together (the audit records); `learn` folds in the records written since "
                                   "the last learn, `show` lists a unit's edges, `forget` drops what was "
                                   "learned.")
    gsub = p.add_subparsers(dest="graph_command", metavar="SUBCOMMAND", required=True)
    pl = gsub.add_parser("learn", help="fold the audit records written since the last learn into usage edges")
    memory_arg(pl)
    pl.add_argument("--json", action="store_true", help="print the report as JSON")
    pl.set_defaults(handler=cmd_graph_learn)
    ps = gsub.add_parser("show", help="a unit's edges by kind, with their weights and where they came from")
    ps.add_argument("unit_id", metavar="UNIT", help="memo://<kb>/<doc>/<key>")
    memory_arg(ps)
    ps.add_argument("--json", action="store_true", help="print the edges as JSON")
    ps.set_defaults(handler=cmd_graph_show)
    pf = gsub.add_parser("forget", help="drop the edges learned from use (the records read stay read)")
    pf.add_argument("--kind", required=True, choices=("usage",), help="the learned edge kind to drop")
    memory_arg(pf)
    pf.set_defaults(handler=cmd_graph_forget)


def cmd_graph_learn(args) -> int:
    from ..graph import learn
    from ..store import Memory, UsageLog
    from ..verify import audit

    with Memory(memory_dir(args), load_indexes=False) as m, UsageLog(m.directory, create=True) as log:
        records, offsets = audit.read_new(m.directory, log.offsets())
        report = learn(m, log, records, offsets)
    if args.json:
        print(json.dumps(report))
    else:
        print(f"read {report['records']} audit records ({report['answers']} with kept citations of active "
              f"units, {report['inactive_citations']} citations of retired units left out); newly counted: "
              f"{report['questions']} questions, {report['units']} unit citations, {report['pairs']} pairs")
    return EXIT_OK


def cmd_graph_show(args) -> int:
    from ..graph import EDGE_KINDS, load_or_build
    from ..graph.build import kind_beta
    from ..graph.usage import DAY
    from ..retrieve import RetrieveConfig
    from ..store import Memory, UsageLog
    from ..units.ids import parse_unit_id
    from ..units.model import InputError

    try:
        parse_unit_id(args.unit_id)
    except InputError as exc:
        return fail(str(exc), EXIT_BAD_INPUT)
    config = RetrieveConfig().graph  # the graph recall reads
    with Memory(memory_dir(args)) as m:
        unit = m.unit(args.unit_id)
        if unit is None:
            return fail(f"unit {args.unit_id}: not in memory {m.directory}", EXIT_NOT_FOUND)
        edges = []
        if unit.status == "active":
            g = load_or_build(m, config)
            lo, hi = int(g.indptr[unit.row]), int(g.indptr[unit.row + 1])
            dst = g.indices[lo:hi].astype(int)
            ids = m.ids_at_rows(int(d) for d in dst if d < g.num_rows)
            with UsageLog(m.directory) as log:
                used = log.pairs_of(unit.id, datetime.now(timezone.utc).timestamp(),
                                    config.usage_half_life_days * DAY)
            for e, d in zip(range(lo, hi), dst.tolist()):
                kind, w = EDGE_KINDS[g.kinds[e]], float(g.weights[e])
                target = ids.get(d) if d < g.num_rows else g.node_name(d)
                edges.append({"kind": kind, "to": target, "weight": round(w, 4),
                              "from": _provenance(kind, w, target, m, unit, d, g, config, used, kind_beta)})
    if args.json:
        print(json.dumps({"unit": unit.id, "status": unit.status, "edges": edges}, indent=2,
                         ensure_ascii=False))
        return EXIT_OK
    print(f"{unit.id}  [{unit.status}]" + ("" if edges else "  (no edges)"))
    for kind in EDGE_KINDS:
        mine = sorted((e for e in edges if e["kind"] == kind), key=lambda e: -e["weight"])
        if mine:
            print(f"  {kind} ({len(mine)})")
            for e in mine:
                print(f"    {e['weight']:.3f}  {e['to']}  ({e['from']})")
    return EXIT_OK


def _provenance(kind, w, target, m, unit, d, g, config, used, kind_beta) -> str:
    """Where one edge came from, in words."""
    if kind == "usage":
        count, at = used.get(target, (0.0, 0.0))
        day = datetime.fromtimestamp(at, timezone.utc).date().isoformat() if at else "?"
        return f"cited together with it by {count:.1f} questions (decayed), last on {day}; asmr graph learn"
    if kind == "cooccur":
        beta = kind_beta(config, kind)
        value = (w - config.gamma * config.prior.get(kind, 0.0)) / beta if beta else 0.0
        return f"co-occurs across documents with what it names, NPMI {value:.2f}"
    if d >= g.num_rows:
        return "it names this entity" if kind == "entity" else "a changelog naming this entity"
    cos = float(m.vectors[unit.row] @ m.vectors[d])
    if kind == "structure":
        return f"same document or a reference to it, cosine {cos:.2f}"
    if kind == "temporal":
        return f"another version of the same statement, cosine {cos:.2f}"
    return f"nearest neighbour, cosine {cos:.2f}"


def cmd_graph_forget(args) -> int:
    from ..store import Memory, UsageLog

    with Memory(memory_dir(args), load_indexes=False) as m, UsageLog(m.directory) as log:
        n = log.forget()
    print(f"forgot {n} learned {args.kind} pairs; audit records already read are not learned again")
    return EXIT_OK
