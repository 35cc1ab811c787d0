"""`python -m query_guard` is the `query-guard` command."""

from query_guard.cli.main import main

raise SystemExit(main())
