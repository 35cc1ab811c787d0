"""What `serve` prints about its backend never holds a password (the embedded database's
generated one, handed to every worker of `[server] workers`, or one in a configured URL)."""

from __future__ import annotations

import pytest

from query_guard.config.auth import printable_url


@pytest.mark.parametrize(
    ("url", "printed"),
    [
        ("falkordb://:s3cr%2Ft@127.0.0.1:6379/movies", "falkordb://:***@127.0.0.1:6379/movies"),
        ("bolt://neo4j:pw@db.example:7687", "bolt://neo4j:***@db.example:7687"),
        ("falkordb://127.0.0.1:6379/movies", "falkordb://127.0.0.1:6379/movies"),
        ("bolt://neo4j@db.example:7687", "bolt://neo4j@db.example:7687"),
        ("", ""),
    ],
)
def test_a_password_is_never_printed(url: str, printed: str) -> None:
    assert printable_url(url) == printed
