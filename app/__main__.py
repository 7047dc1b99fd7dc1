"""Allow ``python -m app``."""

from app.cli import main

raise SystemExit(main())
