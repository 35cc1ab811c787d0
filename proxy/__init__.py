"""query-guard: a guard between LLM-written graph queries and graph databases."""

__version__ = "0.1.0"
