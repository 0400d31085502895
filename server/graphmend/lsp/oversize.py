"""Documents the editor sent as more than the server reads whole (`protocol.Utf8CheckingInput`):
they stand as a one-line placeholder, which the analysis answers with one GM002 note. Apart from
`protocol` so that the analysis worker reads it without the LSP stack."""

from __future__ import annotations

MAX_MESSAGE_BYTES = 64 << 20  # a message over this is read a piece at a time, never whole
_PLACEHOLDER = "# graphmend: the editor sent this document as {size} bytes, more than graphmend reads\n"


def placeholder(size: int) -> str:
    """The text a document too large to read stands as (`placeholder_size` reads it back)."""
    return _PLACEHOLDER.format(size=size)


def placeholder_size(text: str) -> int | None:
    """The size of the document `text` stands for, when it is a placeholder; else None."""
    head, _, rest = _PLACEHOLDER.partition("{size}")
    if not text.startswith(head) or not text.endswith(rest) or len(text) > len(_PLACEHOLDER) + 24:
        return None
    number = text[len(head) : len(text) - len(rest)]
    return int(number) if number.isdigit() else None
