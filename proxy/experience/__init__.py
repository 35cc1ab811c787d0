"""The experience library (DESIGN §10, "the proxy learns"): verified runs become examples
(`verify`, `templates`), stored with their weights (`store`: the protocol and ranking;
`sqlite_store` embedded, `postgres_store` shared), served as few-shot context ranked by
full-text relevance times weight, optionally blended with embeddings (`embeddings`),
re-checked after schema drift, reinforced by use and feedback and decayed with time
(`library`); the schema text ordered by weight (`schema_order`); managed by the operator
(`query-guard experience`, `cli`)."""
