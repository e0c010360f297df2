"""The import picture of python/asmr (DESIGN.md section 2): every import goes to the same package or
down the path of a question, never up or sideways, and no module reaches into another package's
private names. Read from the source with ast, so it needs nothing built."""
from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "python" / "asmr"

# Lowest first: a package may import the packages before it in this list, and itself.
LAYERS = (
    "paths",  # where a memory lives by default: standard library only, read before the store loads
    "text",  # the ground floor for reading text
    "decoding",  # the citation-closure automaton and its markers
    "units",
    "embed",
    "index",
    "store",
    "graph",
    "retrieve",
    "verify",
    "generate",
    "redundancy",
    "answer",
    "eval",
    "integrations",
    "reindex",
    "server",
    "cli",  # the command line sits on top of every other face
)
# Imports that break the rules on purpose: (importing package, imported package) and (importing
# file, module whose private names it takes). Both start empty; an entry needs a reason beside it.
ALLOWED: set[tuple[str, str]] = set()
ALLOWED_PRIVATE: set[tuple[str, str]] = set()


def _modules(folder: Path):
    for path in sorted(folder.rglob("*.py")):
        parts = path.relative_to(folder.parent).with_suffix("").parts
        yield path, parts[:-1] if parts[-1] == "__init__" else parts


def _imports(path: Path, module: tuple[str, ...]):
    """(line, imported module, imported names) of every import in ``path``, relative ones resolved."""
    package = module if path.name == "__init__.py" else module[:-1]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name, []
        elif isinstance(node, ast.ImportFrom):
            base = ".".join(package[:len(package) - node.level + 1]) if node.level else ""
            target = ".".join(p for p in (base, node.module or "") if p)
            yield node.lineno, target, [a.name for a in node.names]


def _private(name: str) -> bool:
    return name.startswith("_") and not name.startswith("__")


def test_layers_list_every_package():
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    packages |= {p.stem for p in PACKAGE.glob("*.py") if p.name != "__init__.py"}  # a module at the root
    assert packages == set(LAYERS), f"packages {sorted(packages ^ set(LAYERS))}: add them to LAYERS or remove them"


def test_imports_go_down_or_stay():
    rank = {name: i for i, name in enumerate(LAYERS)}
    wrong = []
    for path, module in _modules(PACKAGE):
        own = module[1] if len(module) > 1 else None
        for line, target, names in _imports(path, module):
            parts = target.split(".")
            if parts[0] != "asmr":
                continue
            if len(parts) == 1:  # the root package: only its __version__
                if set(names) - {"__version__"}:
                    wrong.append(f"{path.relative_to(ROOT)}:{line} imports {names} from asmr itself")
                continue
            other = parts[1]
            if other not in rank:  # a module at the root other than __init__: none may exist
                wrong.append(f"{path.relative_to(ROOT)}:{line} imports {target}, outside every package")
            elif own is None:
                wrong.append(f"{path.relative_to(ROOT)}:{line}: asmr/__init__.py imports {target}")
            elif other != own and rank[other] > rank[own] and (own, other) not in ALLOWED:
                wrong.append(f"{path.relative_to(ROOT)}:{line}: {own} imports {target}, which is above it")
    assert not wrong, "imports that go up:\n" + "\n".join(wrong)


def test_no_private_name_crosses_a_package():
    wrong = []
    folders = [PACKAGE, ROOT / "asmr_kernels", ROOT / "bench", ROOT / "examples"]
    for folder in folders:
        for path, module in _modules(folder):
            own = module[:2] if module[0] == "asmr" else module[:1]
            for line, target, names in _imports(path, module):
                parts = tuple(target.split("."))
                if parts[0] not in ("asmr", "asmr_kernels"):
                    continue
                owner = parts[:2] if parts[0] == "asmr" else parts[:1]
                if owner == own:
                    continue
                hidden = [p for p in parts if _private(p)] + [n for n in names if _private(n)]
                if hidden and (str(path.relative_to(ROOT)), target) not in ALLOWED_PRIVATE:
                    wrong.append(f"{path.relative_to(ROOT)}:{line} imports {hidden} from {target}")
    assert not wrong, "private names used outside their package:\n" + "\n".join(wrong)


def test_kernels_know_nothing_of_the_engine():
    wrong = [f"{path.relative_to(ROOT)}:{line} imports {target}"
             for path, module in _modules(ROOT / "asmr_kernels")
             for line, target, _ in _imports(path, module) if target.split(".")[0] == "asmr"]
    assert not wrong, "\n".join(wrong)


def test_sql_only_in_the_store():
    """No module outside asmr/store runs a statement: the store owns every query of its schema."""
    calls = {"execute", "executemany", "executescript"}
    wrong = [f"{path.relative_to(ROOT)}:{node.lineno} calls .{node.func.attr}()"
             for path, module in _modules(PACKAGE) if module[1:2] != ("store",)
             for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
             if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in calls]
    assert not wrong, "SQL outside the store:\n" + "\n".join(wrong)
