"""The house's layout, checked on the source: one-way imports, no circles, shared layers free of games, short modules.

The import graph is read with ``ast`` from every module of ``krypenv/``, ``agents/`` and
``eval/``: every ``import`` and ``from ... import`` statement, at module level, inside
functions or under ``if TYPE_CHECKING:`` (an annotation's import is a dependency too: a
circle through one is still a circle), is an edge to the module it names (``from pkg import
mod`` names ``pkg.mod`` when that is a module, else ``pkg``).  The one thing that is not an
edge: the parent packages an import initialises on the way (``import a.b.c`` also runs
``a/__init__`` and ``a/b/__init__``): Python initialises a package before its modules, and a
package ``__init__`` that imports its own modules to export their names is the usual way to
do that.

Dynamic loads (``importlib.import_module``) are not import statements, so they are not in
the graph either; the test allows them only where a registry names what is loaded, listed
in :data:`DYNAMIC_LOADS`.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("krypenv", "agents", "eval")  # the source folders; agents/ and eval/ are krypenv.agents and krypenv.eval
FOLDER_PACKAGE = {"agents": "krypenv.agents", "eval": "krypenv.eval"}  # pyproject's [tool.setuptools.package-dir]
TOP_LEVEL = ("krypenv", "train")  # the importable names of this repository
MAX_LINES = 520
UI = "krypenv.ui"  # the play-and-watch layer: beside the CLI at the top, not a game
SHARED = ("krypenv.agent_api", "krypenv.records", "krypenv.replay", "krypenv.bench", "krypenv.rng",
          "krypenv.agents.base", "krypenv.eval", "krypenv.eval.schedule", "krypenv.eval.stats", "krypenv.eval.play",
          "krypenv.eval.ray_pool", "krypenv.eval.report", "krypenv.eval.command", "krypenv.eval.bench", "krypenv.envs",
          "krypenv.envs.batch", "krypenv.envs.aec", "krypenv.envs.gym", "krypenv.envs.vec", "krypenv.envs.spaces")
SHARED_PACKAGES = ("krypenv.envs", "krypenv.openspiel")  # sub-packages of krypenv written once for every game
# krypenv.openspiel wraps every game for OpenSpiel (one module per game, named after it); its modules that play
# our agents sit with the evaluation layer:
OPENSPIEL_EVAL = ("krypenv.openspiel.exploit", "krypenv.openspiel.solve", "krypenv.openspiel.tree")

# The only dynamic loads allowed, each by a registry of names (they are not import statements,
# so the graph below does not hold them; records, bench, the CLI, the UI and train.py load a
# game's modules lazily through Game.part, and those modules import the shared ones back, by design):
DYNAMIC_LOADS = {
    "krypenv.games": "GAMES: each game's declaration names the module of each of its layers",
    "krypenv.agents.base": "a user's module:attr agent spec",
}


@dataclass
class Module:
    """One parsed module: its name, file, whether it is a package, and its imports."""

    name: str
    path: Path
    is_package: bool
    imports: list[tuple[str, int, bool]] = field(default_factory=list)  # (module named, line, at module level)
    dynamic_loads: list[int] = field(default_factory=list)  # lines of importlib.import_module / __import__ calls


def module_name(path: Path) -> str:
    """The dotted name of a source file under the repository root."""
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    parts = [*FOLDER_PACKAGE.get(parts[0], parts[0]).split("."), *parts[1:]]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)



def collect(mod: Module, tree: ast.AST) -> list[tuple[str, list[str], int, bool]]:
    """Raw imports of a tree: (base module, imported names, line, at module level); records dynamic loads."""
    raw: list[tuple[str, list[str], int, bool]] = []

    def visit(node: ast.AST, top: bool) -> None:
        if isinstance(node, ast.Import):
            raw.extend((alias.name, [], node.lineno, top) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative import: resolve against this module's package
                package = mod.name.split(".") if mod.is_package else mod.name.split(".")[:-1]
                package = package[:len(package) - (node.level - 1)]
                base = ".".join(package + ([base] if base else []))
            raw.append((base, [alias.name for alias in node.names], node.lineno, top))
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name in ("import_module", "__import__"):
                mod.dynamic_loads.append(node.lineno)
        inner = top and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    for stmt in tree.body:
        visit(stmt, True)
    return raw


def parse_house() -> dict[str, Module]:
    """Every module of the packages, with its imports resolved to module names (internal ones only)."""
    files = [p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))]
    modules = {module_name(p): Module(module_name(p), p, p.name == "__init__.py") for p in files}
    for mod in modules.values():
        for base, names, line, top in collect(mod, ast.parse(mod.path.read_text(encoding="utf-8"))):
            if base.split(".")[0] not in (*TOP_LEVEL, *FOLDER_PACKAGE):
                continue
            targets = [f"{base}.{n}" for n in names if f"{base}.{n}" in modules] or [base]
            if len(targets) < len(names) and names:  # some names are attributes of base itself
                targets = sorted(set(targets) | {base})
            mod.imports.extend((t, line, top) for t in targets)
    return modules


HOUSE = parse_house()


def where(mod: Module, line: int) -> str:
    """``path:line`` of an import."""
    return f"{mod.path.relative_to(ROOT)}:{line}"


def game_packages() -> list[str]:
    """The game packages: krypenv's sub-packages but the shared ones."""
    return sorted(name for name, mod in HOUSE.items() if mod.is_package and name.count(".") == 1
                  and name.startswith("krypenv.") and layer(name) == 0 and name not in SHARED_PACKAGES)


def test_every_internal_import_names_an_existing_module() -> None:
    """No import of an old path (krypenv.core, krypenv.vec, agents.ppo, ...): every internal target exists."""
    missing = [f"{where(mod, line)} imports {target}" for mod in HOUSE.values() for target, line, _ in mod.imports
               if target not in HOUSE and target != "train"]
    assert not missing, missing


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """A cycle of the directed graph as a list of nodes (first = last), or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def dfs(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if nxt not in state and (found := dfs(nxt)):
                return found
        path.pop()
        state[node] = 2
        return None

    for start in sorted(graph):
        if start not in state and (found := dfs(start)):
            return found
    return None


def test_import_graph_has_no_cycles() -> None:
    """Imports inside functions included: the dependencies point one way (rules <- engine <- envs <- agents, eval)."""
    graph = {name: {t for t, _, _ in mod.imports if t in HOUSE and t != name} for name, mod in HOUSE.items()}
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle: " + " -> ".join(cycle or [])
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]  # the check itself works


def layer(name: str) -> int:
    """The layer of a module: 0 the games and what they share, 1 agents, 2 evaluation, 3 training, UI, CLI."""
    if name == "krypenv.agents" or name.startswith("krypenv.agents."):
        return 1
    if name == "krypenv.eval" or name.startswith("krypenv.eval.") or name in OPENSPIEL_EVAL:
        return 2
    if name in ("train", "krypenv.cli") or name.startswith((UI, "krypenv.training")):
        return 3
    return 0


def test_imports_point_down_the_layers() -> None:
    """Nothing imports a module of a layer above its own (games < agents < evaluation < training, UI, CLI)."""
    upward = [f"{where(mod, line)} imports {t}" for name, mod in HOUSE.items() for t, line, _ in mod.imports
              if t in HOUSE and layer(t) > layer(name)]
    assert not upward, upward


def test_no_top_level_agents_or_eval_import() -> None:
    """agents/ and eval/ are imported as krypenv.agents and krypenv.eval only (the wheel installs no other name)."""
    bad = [f"{where(mod, line)} imports {t}" for mod in HOUSE.values() for t, line, _ in mod.imports
           if t.split(".")[0] in FOLDER_PACKAGE]
    assert not bad, bad


def test_shared_modules_import_no_game() -> None:
    """The shared layers import no game package, at module level or inside functions (games come by registry)."""
    games = game_packages()
    assert "krypenv.krypkasino" in games
    from krypenv.games import GAMES

    per_game = [module for g in GAMES.values() for module in (g.agents, g.eval)]  # each game's agents and eval
    bad = [f"{where(HOUSE[name], line)} imports {t}" for name in SHARED for t, line, _ in HOUSE[name].imports
           if any(t == g or t.startswith(g + ".") for g in games + per_game)]
    assert not bad, bad


def test_games_do_not_import_each_other() -> None:
    """A game package imports no other game package (in krypenv/ and in agents/)."""
    games = game_packages()
    agent_games = sorted(n for n, m in HOUSE.items() if m.is_package and n.count(".") == 2
                         and n.startswith("krypenv.agents."))
    bad = []
    for family in (games, agent_games):
        for game in family:
            others = [g for g in family if g != game]
            for name, mod in HOUSE.items():
                if name == game or name.startswith(game + "."):
                    bad += [f"{where(mod, line)} imports {t}" for t, line, _ in mod.imports
                            if any(t == o or t.startswith(o + ".") for o in others)]
    assert not bad, bad


def test_dynamic_loads_only_by_registry() -> None:
    """importlib.import_module appears only in the modules of DYNAMIC_LOADS (each loads by a registry of names)."""
    found = {name for name, mod in HOUSE.items() if mod.dynamic_loads}
    assert found == set(DYNAMIC_LOADS), found
    from krypenv.games import GAMES, PARTS

    for game in GAMES.values():
        for part in PARTS:
            module = getattr(game, part)  # that each one imports is tests/test_games.py's
            assert module.startswith("krypenv.") and game.name in module, (game.name, part, module)


@pytest.mark.parametrize("path", [*[p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))],
                                  *sorted(ROOT.glob("train*.py"))], ids=lambda p: str(p.relative_to(ROOT)))
def test_modules_are_short(path: Path) -> None:
    """No module of krypenv/, agents/, eval/ or train*.py is over 520 lines."""
    lines = len(path.read_text(encoding="utf-8").splitlines())
    assert lines <= MAX_LINES, f"{path.relative_to(ROOT)} has {lines} lines"


def test_numba_cache_hash_covers_nested_game_packages() -> None:
    """The numba cache folder's hash reads the compiled modules at every depth of the game packages."""
    import krypenv

    sources = {p.relative_to(ROOT).as_posix() for p in krypenv.compiled_sources()}
    assert {"krypenv/krypkasino/engine/kernels.py", "krypenv/krypkasino/engine/captures.py",
            "krypenv/krypkasino/env_kernels.py", "krypenv/rng.py"} <= sources


COMPILING_DECORATORS = {"njit", "jit", "borrowing", "counted", "intrinsic", "overload", "overload_method",
                        "register_jitable", "vectorize", "guvectorize"}


def _name(node: ast.expr) -> str:
    """The last name of a decorator or callee: ``njit`` for ``njit``, ``njit(cache=True)`` and ``numba.njit``."""
    node = node.func if isinstance(node, ast.Call) else node
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")


def test_numba_cache_hash_covers_every_module_with_compiled_code() -> None:
    """Every module of krypenv that compiles a function (any numba decorator or its call, or krypenv.jit's) is in the
    cache folder's hash, agents/ and eval/ (krypenv.agents, krypenv.eval) included: else editing it would leave the
    machine code of its callers in other modules stale (pimc.py inlines tactics.py)."""
    import krypenv

    sources = {p.resolve() for p in krypenv.compiled_sources()}
    compiling = set()
    for path in sorted(p.resolve() for folder in ("krypenv", "agents", "eval") for p in (ROOT / folder).rglob("*.py")):
        nodes = list(ast.walk(ast.parse(path.read_text(encoding="utf-8"))))
        decorators = [d for n in nodes if isinstance(n, ast.FunctionDef) for d in n.decorator_list]
        if any(_name(n) in COMPILING_DECORATORS for n in [*decorators, *(n for n in nodes if isinstance(n, ast.Call))]):
            compiling.add(path)
    assert {"observation.py", "bits.py", "gpu_lean.py", "jit.py", "tactics.py", "pimc.py"} <= \
        {p.name for p in compiling}
    assert not compiling - sources, sorted(p.relative_to(ROOT).as_posix() for p in compiling - sources)


def test_ui_imports_each_game_only_in_its_adapter() -> None:
    """The UI's shared modules import no game; each game is imported by its adapter and the adapter registry only."""
    games = game_packages()
    bad = []
    for name, mod in HOUSE.items():
        if not name.startswith(UI + "."):
            continue
        own = name.rsplit(".", 1)[1]
        bad += [f"{where(mod, line)} imports {t}" for t, line, _ in mod.imports
                if any(t == g or t.startswith(g + ".") for g in games if g != f"krypenv.{own}")]
    assert not bad, bad


def test_no_game_is_named_outside_the_registry_and_its_own_packages() -> None:
    """Which games exist is written in krypenv/games.py only: no string equal to a game's name in any other module.

    A game's own modules (a path part named after the game: ``krypenv/<game>/``, ``<game>_v0.py``,
    ``agents/<game>/``, ``eval/<game>/``, ``training/<game>.py``, ``ui/<game>.py``) may name it.
    Docstrings and help texts that mention a game inside a longer text are not names.
    """
    import ast

    from krypenv.games import GAMES

    def own(path: Path) -> bool:
        parts = path.relative_to(ROOT).with_suffix("").parts
        return parts == ("krypenv", "games") or any(p.removesuffix("_v0") in GAMES for p in parts)

    files = [p for pkg in PACKAGES for p in sorted((ROOT / pkg).rglob("*.py"))] + [ROOT / "train.py"]
    named = [f"{p.relative_to(ROOT)}:{node.lineno} {node.value!r}" for p in files if not own(p)
             for node in ast.walk(ast.parse(p.read_text(encoding="utf-8")))
             if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in GAMES]
    assert not named, named
