"""The execution-triggered repair loop (DESIGN §6): one loop, a strategy per language.

- `repairer`   — `Repairer` and `build_repairer`: settings, the `guard_repair` hook, entry point.
- `loop`       — THE loop: budget, candidates, grounding, hook, stopping rules, safe vs
  speculative, re-judging, the attempt log; `Strategy`, what it asks of a language.
- `cypher`, `gremlin`, `sql` — the strategies; `candidates` (Cypher's arrows and relaxation),
  `cypher_literals`, `sql_literals` (their grounding bindings, probes and rewrites).
- `grounding`  — literal grounding, once: probes' notes, fixes, their wording.
- `model`      — the vocabulary shared with the runner and repair plugins.
"""
