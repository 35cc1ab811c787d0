"""The execution-triggered repair loop (DESIGN §6), one module per step.

- `repairer`   — `Repairer` and `build_repairer`: the entry point frontends call.
- `loop`       — one run of the loop: attempts, budget, safe vs speculative outcomes.
- `candidates` — pure candidate generators (arrow flips, relaxations) from the schema.
- `grounding`  — literal grounding against stored values.
- `model`      — the request/candidate/outcome types shared with repair plugins.
"""
