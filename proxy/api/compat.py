"""The proxy-answered procedures (DESIGN §8), for the rule that serves them: which procedures
and SHOW commands the proxy answers, and the rewrites that answer them."""

from query_guard.compat.procedures import PROCEDURES, SHOW_COMMANDS
from query_guard.compat.rewrite import ROW, UnknownColumn, any_property_edits, call_edit, show_edit
from query_guard.compat.served import acknowledged, answered, idempotent
from query_guard.schema.indexes import shown

__all__ = [
    "PROCEDURES", "ROW", "SHOW_COMMANDS", "UnknownColumn", "acknowledged", "answered",
    "any_property_edits", "call_edit", "idempotent", "show_edit", "shown",
]  # fmt: skip
