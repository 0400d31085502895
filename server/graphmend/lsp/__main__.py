"""`graphmend-lsp [--stdio | --tcp HOST:PORT]`."""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
from collections.abc import Sequence

from .. import __version__

# How long a thread of the server holds the GIL while another waits (Python's default: 5 ms). The
# server's threads (a summary, a project build) are CPU-bound beside the event loop, and each step of
# an edit's way (reading the message, handing it to the worker, taking the result back) waits for
# the GIL: at 5 ms a turn, an edit that met a summary took 6-10x `ast.parse` instead of 2.5x.
SWITCH_INTERVAL_S = 0.0005


class RoutineCancels(logging.Filter):
    """A client cancelling a request the server has already answered is routine (VS Code does it as
    the user types): pygls logs it as a warning, which editors then show in their output channel."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("Cancel notification for unknown message id")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="graphmend-lsp", description="The graphmend language server.")
    parser.add_argument("--version", action="version", version=f"graphmend-lsp {__version__}")
    transport = parser.add_mutually_exclusive_group()
    transport.add_argument("--stdio", action="store_true", help="talk over stdin/stdout (the default)")
    transport.add_argument("--tcp", metavar="HOST:PORT", help="listen on a TCP address")
    parser.add_argument("--log-level", default="WARNING", choices=("DEBUG", "INFO", "WARNING", "ERROR"))
    args = parser.parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=args.log_level)
    logging.getLogger("pygls.protocol.json_rpc").addFilter(RoutineCancels())
    from . import parsing
    from .protocol import Utf8CheckingInput
    from .server import (
        server,  # imported late so --help/--version work without the LSP stack
    )

    parsing.install()  # the event loop and the server's threads both parse
    sys.setswitchinterval(SWITCH_INTERVAL_S)

    def terminate(signum: int, frame: object) -> None:
        """SIGTERM (an editor giving up on the server) ends it as `exit` would: 0 after `shutdown`,
        else 1, the analysis worker stopped first. At once: a normal interpreter exit would wait
        for the thread blocked reading stdin."""
        server.worker.close()
        sys.stderr.flush()
        os._exit(0 if server.protocol._shutdown else 1)

    signal.signal(signal.SIGTERM, terminate)
    if args.tcp:
        host, _, port = args.tcp.rpartition(":")
        if not port.isdigit():
            parser.error("--tcp expects HOST:PORT, e.g. 127.0.0.1:2087")
        server.start_tcp(host or "127.0.0.1", int(port))
    else:
        server.start_io(stdin=Utf8CheckingInput(sys.stdin.buffer))  # type: ignore[arg-type]
    return server.protocol.exit_code  # type: ignore[attr-defined]  # 1 for `exit` without `shutdown`


if __name__ == "__main__":
    sys.exit(main())
