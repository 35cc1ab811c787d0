"""No import cycles between the project's modules (issue 10 item 6), checked on the import
graph `grimp` builds from the source (imports under TYPE_CHECKING and inside functions count:
they tie modules together just the same)."""

from __future__ import annotations

import grimp

PACKAGES = ("proxy", "plugins")
# Cycles known on main and owned by other work; each must go. Listed exactly, so that a new
# cycle fails this test, and so does a listed one that is gone (then remove it here).
KNOWN: set[frozenset[str]] = {
    frozenset({"proxy.gremlin.language", "proxy.pipeline", "proxy.sql.language"}),
    frozenset({"proxy.backends.sql_postgres", "proxy.backends.sql_sqlite", "proxy.sql.backend"}),
    frozenset({"proxy.repair.loop", "proxy.repair.repairer"}),
    frozenset({"proxy.frontends.mcp", "proxy.server"}),
}


def import_cycles(graph: grimp.ImportGraph) -> set[frozenset[str]]:
    """The strongly connected groups of two or more modules (Tarjan, iteratively)."""
    modules = sorted(graph.modules)
    inside = set(modules)
    edges = {m: sorted(set(graph.find_modules_directly_imported_by(m)) & inside) for m in modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: set[frozenset[str]] = set()
    for root in modules:
        if root in index:
            continue
        work = [(root, 0)]
        while work:
            node, i = work.pop()
            if i == 0:
                index[node] = low[node] = len(index)
                stack.append(node)
                on_stack.add(node)
            if i < len(edges[node]):
                work.append((node, i + 1))
                nxt = edges[node][i]
                if nxt not in index:
                    work.append((nxt, 0))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            if low[node] == index[node]:
                group = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.add(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.add(frozenset(group))
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return found


def test_import_cycles_finds_a_cycle() -> None:
    graph = grimp.ImportGraph()
    for module in ("a", "b", "c", "d"):
        graph.add_module(module)
    graph.add_import(importer="a", imported="b")
    graph.add_import(importer="b", imported="c")
    graph.add_import(importer="c", imported="a")
    graph.add_import(importer="c", imported="d")
    assert import_cycles(graph) == {frozenset({"a", "b", "c"})}


def test_no_new_import_cycles() -> None:
    cycles = import_cycles(grimp.build_graph(*PACKAGES))
    assert cycles - KNOWN == set(), "new import cycles"
    assert KNOWN - cycles == set(), "cycles gone: remove them from KNOWN"


def test_the_bolt_layer_has_no_import_cycles() -> None:
    cycles = import_cycles(grimp.build_graph(*PACKAGES))
    bolt = [c for c in cycles if any(".bolt" in m or "bolt_relay" in m for m in c)]
    assert bolt == []
