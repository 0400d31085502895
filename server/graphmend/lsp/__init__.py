"""The language server front (pygls): a thin layer over `graphmend.api`."""
