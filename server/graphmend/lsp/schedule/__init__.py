"""Scheduling: debounced, cancellable tasks (one per document), and the processes analyses run in.

Nothing here knows the server or what the tasks do: `open_documents` and `closed_files` decide that."""
