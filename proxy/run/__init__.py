"""THE request path every front calls (DESIGN §1 `run/`): `runner.Runner` with a route per
language, the `[limits]` it enforces, result cuts and the audit record."""
