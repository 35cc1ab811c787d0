"""`python -m proxy` is the `query-guard` command."""

from proxy.cli import main

raise SystemExit(main())
