"""The server's session: its state (documents, settings, the workspace index, caches) and what it
announces to, and knows of, the client. It knows neither the handlers nor what runs when
(`open_documents`, `closed_files`): they build on it."""
