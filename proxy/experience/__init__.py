"""The experience library (DESIGN §10, "the proxy learns"): verified runs become examples
(`verify`, `templates`), stored with their weights (`store`, SQLite), served as few-shot
context ranked by BM25 times weight, reinforced by use and feedback and decayed with time
(`library`), and managed by the operator (`query-guard experience`, `cli`)."""
