"""The schema catalog the rules consult (DESIGN §3), the SQL catalog, how both are discovered
and kept fresh, the grounding context for LLM apps, and the `GuardContext` built from them."""
