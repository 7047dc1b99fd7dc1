"""Entry point of the PyInstaller bundle (the same CLI as the `nestscope` script)."""

from app.cli import main

raise SystemExit(main())
