"""graphmend's modules import one another without a circle, at every level: module by module, and
package by package inside each package (`inference` and `regions` below `analysis`, below `fixes`,
below `rules`...; in the language server, `edit/` and `schedule/` below `session/`). A circle would
mean an import that runs back up a layer. And the layers are the ones CONTRIBUTING's map documents:
every module is placed, and imports only at or below its layer. Every import counts: inside
functions and under `TYPE_CHECKING` too."""

from __future__ import annotations

import ast
import re
from graphlib import CycleError, TopologicalSorter

import pytest
from conftest import ROOT

PACKAGE = ROOT / "server" / "graphmend"


def module_imports() -> dict[str, set[str]]:
    """Each module ("inference.walk"; a package by its name, the top package "") → the modules of
    graphmend it imports, with the packages that importing them initialises (not its own)."""
    paths = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        paths[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        package: list[str] = (name.split(".") if name else []) if path.name == "__init__.py" else name.split(".")[:-1]
        ancestors = {".".join(package[:i]) for i in range(len(package) + 1)}
        graph[name] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level > 0:
                base = package[: len(package) - node.level + 1] + (node.module.split(".") if node.module else [])
                candidates = [".".join(base), *(".".join([*base, a.name]) for a in node.names)]
            elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("graphmend"):
                base = node.module.split(".")[1:]
                candidates = [".".join(base), *(".".join([*base, a.name]) for a in node.names)]
            elif isinstance(node, ast.Import):
                candidates = [".".join(a.name.split(".")[1:]) for a in node.names if a.name.startswith("graphmend.")]
            else:
                continue
            for target in (c for c in candidates if c in paths):
                pieces = target.split(".")
                graph[name] |= {".".join(pieces[:i]) for i in range(len(pieces) + 1)} - ancestors - {name}
    return graph


def test_the_graph_holds_the_package() -> None:
    graph = module_imports()
    assert {
        "api",
        "cli",
        "inference.walk",
        "regions.compiled",
        "fixes.predicate.merge",
        "lsp.session.state",
    } <= graph.keys()
    assert "inference.module" in graph["checker"] or "inference" in graph["checker"]


def test_modules_import_without_a_circle() -> None:
    TopologicalSorter(module_imports()).prepare()  # CycleError names the circle


@pytest.mark.parametrize("package", ["", "fixes", "lsp", "inference", "regions", "analysis", "rules", "project"])
def test_the_parts_of_each_package_import_without_a_circle(package: str) -> None:
    """The parts one level below `package` (its modules and subpackages) form layers."""
    depth = len(package.split(".")) if package else 0

    def part(name: str) -> str | None:
        parts = name.split(".") if name else []
        inside = parts[:depth] == (package.split(".") if package else []) and len(parts) > depth
        return parts[depth] if inside else None

    parts: dict[str, set[str]] = {}
    for name, imported in module_imports().items():
        own = part(name)
        if own is not None:
            parts.setdefault(own, set()).update(p for p in map(part, imported) if p is not None and p != own)
    assert parts, package
    try:
        TopologicalSorter(parts).prepare()
    except CycleError as error:
        pytest.fail(f"the parts of `graphmend.{package}` import in a circle: {error.args[1]}")


def documented_layers() -> dict[str, int]:
    """CONTRIBUTING's map: each top-level module or package of graphmend → its layer (1 = lowest)."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    map_section = text.split("## The map", 1)[1].split("\n## ", 1)[0]
    layers = {}
    for number, line in re.findall(r"^(\d+)\. (.+)$", map_section, re.M):
        for name in re.findall(r"`([\w]+)/?`", line):
            layers[name] = int(number)
    return layers


def architecture_layers() -> dict[str, int]:
    """docs/architecture.md's layer table: each top-level module or package → its layer."""
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    layers = {}
    for number, modules in re.findall(r"^\| (\d+)\. [^|]+\| ([^|]+) \|", text, re.M):
        for name in re.findall(r"`([\w]+)/?`", modules):
            layers[name] = int(number)
    return layers


def test_the_architecture_table_is_contributings_map() -> None:
    """Issue 51: the two documented layer maps place every module alike, so both are checked by
    the import test below."""
    assert architecture_layers() == documented_layers()


def test_every_import_goes_down_the_documented_layers() -> None:
    """Issue 40: the layers CONTRIBUTING documents are the ones the code has: every module is in
    one, and imports only from its own layer or those below (the root package, `__version__`, is
    below them all)."""
    layers = {"": 0, **documented_layers()}
    graph = module_imports()
    # The one exception: `graphmend.recording()`, the notebook's entry, imports the recorder when called.
    graph[""] = graph[""] - {"record", "record.handler"}
    unplaced = sorted({name.split(".")[0] for name in graph} - set(layers))
    assert not unplaced, f"modules CONTRIBUTING's map does not place: {unplaced}"
    upward = sorted(
        f"{name} (layer {layers[name.split('.')[0]]}) imports {target} (layer {layers[target.split('.')[0]]})"
        for name, targets in graph.items()
        for target in targets
        if layers[target.split(".")[0]] > layers[name.split(".")[0]]
    )
    assert not upward, "imports that go up a layer:\n" + "\n".join(upward)


def test_the_fronts_reach_the_core_only_through_api() -> None:
    """Issue 40: `cli.py` and `lsp/` import graphmend's core only through the `api` façade (besides
    their own modules, the package's `__version__` and `verify`, a front they share)."""
    allowed = {"", "api", "verify"}
    graph = module_imports()
    through = sorted(
        f"{name} imports {target}"
        for name, targets in graph.items()
        if name == "cli" or name.split(".")[0] == "lsp"
        for target in targets
        if target not in allowed and target.split(".")[0] != "lsp"
    )
    assert not through, "fronts importing the core around api:\n" + "\n".join(through)


def test_no_function_over_80_lines_and_no_class_over_250() -> None:
    """Issues 40 and 51: functions stay readable, and what was split by concept stays split: no
    class over about 250 lines anywhere in graphmend."""
    long = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE)
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            length = getattr(node, "end_lineno", 0) - getattr(node, "lineno", 0) + 1
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and length > 80:
                long.append(f"{relative}: def {node.name}, {length} lines")
            if isinstance(node, ast.ClassDef) and length > 250:
                long.append(f"{relative}: class {node.name}, {length} lines")
    assert not long, "\n".join(long)


def test_api_exports_only_what_the_fronts_use() -> None:
    """Issue 51: `api` is the fronts' contract, so it lists what they use and nothing more (tests and
    benchmarks import the rest from where it is defined)."""
    tree = ast.parse((PACKAGE / "api.py").read_text(encoding="utf-8"))
    (exported,) = [
        [element.value for element in node.value.elts]
        for node in tree.body
        if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "__all__" for t in node.targets)
    ]
    used: set[str] = set()
    fronts = [PACKAGE / "cli.py", PACKAGE / "verify.py", PACKAGE / "jupyter.py", *(PACKAGE / "lsp").rglob("*.py")]
    for path in fronts:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "api":
                used.add(node.attr)
            elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[-1] == "api":
                used.update(alias.name for alias in node.names)
    assert not sorted(set(exported) - used), "api exports names no front uses"
