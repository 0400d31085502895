"""Starts the graphmend language server the extension bundles, with the Python that runs this file
(the Python extension's interpreter, or python3 on PATH): graphmend and its pure-Python
dependencies are in ../libs, put there by `npm run bundle-python` (the layout of Microsoft's
python-tools extension template). LibCST is compiled, so it is not bundled: without it the
predicated `torch.where` fixes say so, and everything else works.

The server's analysis worker and index run in processes started with multiprocessing's `spawn`,
which re-runs this script (as `__mp_main__`) in each of them: only the `__main__` guard keeps a
second server from starting there and reading the editor's stdin."""

import os
import sys

if sys.version_info < (3, 10):  # noqa: UP036 - any Python may run this file; the extension then tries the next
    sys.exit(f"graphmend needs Python 3.10 or newer; this is {sys.version.split()[0]}")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "libs"))

from graphmend.lsp.__main__ import main  # noqa: E402  (after the bundled libraries are on the path)

if __name__ == "__main__":
    sys.exit(main())
