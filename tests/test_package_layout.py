"""The Python package's layout: no import cycle between its modules (imports inside
functions count too), every call into the JVM in ``_jvm.py``, a data model without Spark, and each
module holding only what its name says. Read from the source with ``ast``: no Spark needed."""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "pyspark_arrnf"


def _trees(folder: Path) -> dict[str, ast.Module]:
    return {p.stem: ast.parse(p.read_text(), str(p)) for p in sorted(folder.glob("*.py"))}


def import_graph(folder: Path) -> dict[str, set[str]]:
    """Module → the package's modules it imports, anywhere in its code (a function's own import is
    an edge too: it makes a cycle all the same, only later). ``__init__`` is the package itself."""
    modules = {p.stem for p in folder.glob("*.py")}
    name = folder.name
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for module, tree in _trees(folder).items():
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level == 0 and base.split(".")[0] != name:
                    continue
                if node.level == 0:
                    base = base.partition(".")[2]
                if base:
                    targets.append(base.split(".")[0])
                else:  # from . import x: a submodule, or a name of __init__
                    targets += [a.name if a.name in modules else "__init__" for a in node.names]
            elif isinstance(node, ast.Import):
                for a in node.names:
                    parts = a.name.split(".")
                    if parts[0] == name:
                        targets.append(parts[1] if len(parts) > 1 else "__init__")
            graph[module] |= {t for t in targets if t in modules and t != module}
    return graph


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle as ``[a, b, ..., a]``, or None."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(m: str) -> list[str] | None:
        state[m] = 1
        path.append(m)
        for n in sorted(graph[m]):
            if state.get(n) == 1:
                return path[path.index(n):] + [n]
            if n not in state:
                found = visit(n)
                if found:
                    return found
        path.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


def test_no_import_cycle():
    assert find_cycle(import_graph(PACKAGE)) is None, " → ".join(find_cycle(import_graph(PACKAGE)))


def test_a_cycle_through_an_import_inside_a_function_is_found(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from .a import f\n")
    (pkg / "a.py").write_text("from .b import g\n\ndef f():\n    return g()\n")
    (pkg / "b.py").write_text("def g():\n    from .a import f\n    return f\n")
    (pkg / "c.py").write_text("import pkg.a\nfrom pkg import b\n")
    graph = import_graph(pkg)
    assert graph == {"__init__": {"a"}, "a": {"b"}, "b": {"a"}, "c": {"a", "b"}}
    assert find_cycle(graph) == ["a", "b", "a"]
    (pkg / "b.py").write_text("def g():\n    return 1\n")
    assert find_cycle(import_graph(pkg)) is None


def _attributes(tree: ast.AST) -> set[str]:
    return {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}


def test_only_the_jvm_module_calls_into_the_jvm():
    trees = _trees(PACKAGE)
    touching = sorted(m for m, t in trees.items() if "_jvm" in _attributes(t))
    assert touching == ["_jvm"], touching
    # and there, only the extension's one entry point is called
    names = {n.attr for n in ast.walk(trees["_jvm"]) if isinstance(n, ast.Attribute)
             and isinstance(n.value, ast.Attribute) and n.value.attr == "arrnf"}
    assert names == {"Api"}, names


def _imported(tree: ast.AST) -> set[str]:
    out = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Import):
            out |= {a.name for a in n.names}
        elif isinstance(n, ast.ImportFrom):
            out.add("." * n.level + (n.module or ""))
    return out


def test_the_model_needs_neither_spark_nor_the_rest_of_the_package():
    imported = _imported(_trees(PACKAGE)["model"])
    assert not any(m.startswith(("pyspark", "py4j", ".")) for m in imported), imported
    assert import_graph(PACKAGE)["model"] == set()


def test_each_module_holds_what_its_name_says():
    trees = _trees(PACKAGE)

    def public(module: str) -> set[str]:
        return {n.name for n in trees[module].body
                if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and not n.name.startswith("_")}

    assert public("measure") == {"measure", "measure_stream", "watch_stream", "operators_frame", "plot"}
    assert public("errors") == {"ArrnfError", "ArrnfPlanningError", "ArrnfSetupError", "ArrnfSqlWarning", "first_line"}
    # the data model is in model.py: no dataclass anywhere else but for small private helpers
    for module, tree in trees.items():
        if module in ("model", "errors", "jar", "testing", "sql"):
            continue
        assert not any(isinstance(n, ast.ClassDef) and not n.name.startswith("_") for n in tree.body), module
    # every command of the command line is in cli.py
    commands = [(m, n.name) for m, t in trees.items() for n in t.body if isinstance(n, ast.FunctionDef)
                and (n.name.endswith("_command") or n.name.startswith("cmd_"))]
    assert commands and all(m == "cli" for m, _ in commands), commands
    # exception types are errors.py's
    for module, tree in trees.items():
        for n in tree.body:
            if isinstance(n, ast.ClassDef) and any(getattr(b, "id", "").endswith(("Error", "Warning"))
                                                   for b in n.bases):
                assert module == "errors", (module, n.name)


def test_no_module_renders_the_text_form():
    """The text form is the JVM's: ``str()`` of a program or block is its JSON's ``text``; nothing in
    the package defines ``__str__`` otherwise, nor the old renderers."""
    for module, tree in _trees(PACKAGE).items():
        for cls in (n for n in tree.body if isinstance(n, ast.ClassDef)):
            for f in (n for n in cls.body if isinstance(n, ast.FunctionDef)):
                assert f.name not in ("header", "body_lines", "summary"), (module, cls.name, f.name)
                if f.name == "__str__":
                    assert (module, cls.name) in (("model", "Program"), ("model", "Block")), (module, cls.name)
                    assert "self.text" in ast.unparse(f), ast.unparse(f)
