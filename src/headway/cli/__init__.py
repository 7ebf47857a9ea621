"""The `headway` command line."""
