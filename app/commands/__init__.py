"""One module per ``nestscope`` subcommand; each exposes ``add_parser`` and ``run``."""
