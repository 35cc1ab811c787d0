"""Unknown names — labels and property keys the schema does not know (`SCH.UNKNOWN_LABEL`,
`SCH.UNKNOWN_PROPERTY`).

A misspelt label or key matches nothing (or returns null) without any error from the database.
Each finding is a warning with the closest declared name as its hint; nothing is rewritten,
because a wrong guess about a property changes the answer silently.

Labels are checked in node patterns and `WHERE v:Label` predicates of reading clauses.
Properties are checked on `v.key` and inline maps `(v:Label {key: …})` when the variable's
labels are known in its scope and the schema lists properties for them; relationship
properties when the relationship's type is known and the schema lists relationship
properties at all. Patterns of CREATE / MERGE are not checked (they may add new names).

A dynamic label or type (Neo4j 5.26 `:$(expr)`, `:$all(…)`, `:$any(…)`, in patterns, SET and
REMOVE) is named only when the query runs: no schema rule can check it, and `SCH.DYNAMIC_NAME`
(info) says so; it never blocks.
"""

from __future__ import annotations

from collections.abc import Iterable

from query_guard.api import Finding, GuardContext, SchemaCatalog, Severity, hookimpl
from query_guard.api.cypher import CypherQuery, LabelDynamic, ast, closest, positive_names


@hookimpl
def guard_cypher(query: CypherQuery, ctx: GuardContext) -> list[Finding]:
    schema = ctx.schema
    if schema is None:
        return []
    findings = [_dynamic(node) for node in query.find(LabelDynamic)]
    if not schema.nodes:  # no labels
        return findings
    written = query.written()
    findings += _labels(query, schema, written)
    findings += _properties(query, schema, written)
    return findings


def _dynamic(node: LabelDynamic) -> Finding:
    return Finding(
        "SCH.DYNAMIC_NAME",
        Severity.INFO,
        "a dynamic label or relationship type is named only when the query runs: the schema "
        "rules (unknown labels and types, directions) cannot check it",
        node.span,
    )


def _labels(query: CypherQuery, schema: SchemaCatalog, written: frozenset[int]) -> list[Finding]:
    out = []
    nodes = schema.nodes  # label -> keys: `in` asks for a label without building a set
    exprs = [
        n.labels
        for n in query.find(ast.NodePattern)
        if n.labels is not None and id(n) not in written
    ]
    exprs += [c.labels for c in query.find(ast.LabelCheck)]
    for expr in exprs:
        # a plain label (the common case) is its own only name
        names = (expr,) if type(expr) is ast.LabelName else expr.find_all(ast.LabelName)
        for name in names:
            if name.name in nodes:
                continue
            hint = closest(name.name, schema.labels)
            out.append(
                Finding(
                    "SCH.UNKNOWN_LABEL",
                    Severity.WARNING,
                    f"label {name.name!r} is not in the schema"
                    + (f"; did you mean {hint!r}?" if hint else ""),
                    name.name_span,
                    hint=hint,
                )
            )
    return out


def _properties(
    query: CypherQuery, schema: SchemaCatalog, written: frozenset[int]
) -> list[Finding]:
    out = []
    # (variable, key, key span)
    uses: list[tuple[ast.Variable | ast.NodePattern, str, tuple[int, int]]] = []
    for lookup in query.find(ast.PropertyLookup):
        if isinstance(lookup.subject, ast.Variable) and id(lookup) not in written:
            uses.append((lookup.subject, lookup.key, lookup.key_span))
    for node in query.find(ast.NodePattern):
        if isinstance(node.properties, ast.MapLiteral) and id(node) not in written:
            uses += [(node, key, span) for key, span, _ in node.properties.entries]
    # (declared keys, owner's names) per relationship variable and per label set, None: not
    # checked (the owner is spelt out only in a finding)
    if not uses:
        return out
    rel_types = _relationship_variables(query)
    scopes = query.scopes
    by_rel: dict[str, tuple[frozenset[str], Iterable[str]] | None] = {}
    by_labels: dict[frozenset[str], tuple[frozenset[str], Iterable[str]] | None] = {}
    for subject, key, span in uses:
        name = subject.name if isinstance(subject, ast.Variable) else None
        if name is not None and name in rel_types:
            if name not in by_rel:
                by_rel[name] = _rel_owner(schema, rel_types[name])
            found = by_rel[name]
        else:
            labels = scopes.labels(subject)
            if isinstance(subject, ast.NodePattern):
                own = subject.labels  # none or one plain label: the scope's labels hold it
                if own is not None and type(own) is not ast.LabelName:
                    labels = labels | set(positive_names(own))
            if labels not in by_labels:
                by_labels[labels] = _node_owner(schema, labels)
            found = by_labels[labels]
        if found is None:
            continue
        known, names = found
        if key in known:
            continue
        hint = closest(key, known)
        owner = ":" + "|".join(sorted(names))
        out.append(
            Finding(
                "SCH.UNKNOWN_PROPERTY",
                Severity.WARNING,
                f"property {key!r} is not declared on {owner}"
                + (f"; did you mean {hint!r}?" if hint else ""),
                span,
                hint=hint,
            )
        )
    return out


def _rel_owner(
    schema: SchemaCatalog, types: set[str]
) -> tuple[frozenset[str], Iterable[str]] | None:
    """The keys declared on relationships of `types`, and the types; None when the schema
    declares no relationship properties at all."""
    if not types or not any(r.properties for r in schema.relationships):
        return None
    known = frozenset().union(*(schema.relationship_properties(t) for t in types))
    return known, types


def _node_owner(
    schema: SchemaCatalog, labels: frozenset[str]
) -> tuple[frozenset[str], Iterable[str]] | None:
    """The keys declared on nodes with `labels` (those with declared properties), and those
    labels; None when no label has declared properties."""
    if len(labels) < 2:  # the common case: one label (or none), without building sets
        for label in labels:
            known = schema.node_properties(label)
            return (frozenset(known), labels) if known else None
        return None
    labels = frozenset(label for label in labels if schema.node_properties(label))
    if not labels:
        return None
    known = frozenset().union(*(schema.node_properties(lb) for lb in labels))
    return known, labels


def _relationship_variables(query: CypherQuery) -> dict[str, set[str]]:
    """Relationship variable name -> the plain types it is written with (empty: unknown)."""
    out: dict[str, set[str]] = {}
    unknown: set[str] = set()
    for rel in query.find(ast.RelPattern):
        if rel.variable is None:
            continue
        name = rel.variable.name
        if type(rel.types) is ast.LabelName:  # the common case: one plain type
            out.setdefault(name, set()).add(rel.types.name)
            continue
        names = [rel.types] if isinstance(rel.types, ast.LabelName) else None
        if isinstance(rel.types, ast.LabelOr):
            names = list(rel.types.items)
        if names is None or not all(isinstance(t, ast.LabelName) for t in names):
            unknown.add(name)
            names = []
        out.setdefault(name, set()).update(t.name for t in names if isinstance(t, ast.LabelName))
    for name in unknown:
        out[name] = set()
    return out
