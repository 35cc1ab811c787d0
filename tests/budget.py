"""How many examples a property test tries: its own number in the default, derandomized
profile, the active profile's larger budget under HYPOTHESIS_PROFILE=search (tests/conftest.py,
tests/README.md). Read when a test module is imported, after conftest loaded the profile."""

from __future__ import annotations

from hypothesis import settings


def examples(n: int) -> int:
    """`n`, or the active profile's max_examples when that is larger."""
    return max(n, settings.default.max_examples)
