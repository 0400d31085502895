"""Conversions between graphmend's types and the protocol's: locations, diagnostics, edits.

Nothing here knows the server: the client's position units and capabilities come as arguments."""
