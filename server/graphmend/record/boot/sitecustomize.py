"""graphmend's recorder, started in every Python process of a recorded command.

`graphmend record` puts this folder first on PYTHONPATH, so Python imports this file at start-up in
the command's process and in every Python process it starts (torchrun's workers, DataLoader
workers that compile, subprocesses). It installs the trace handler when GRAPHMEND_RECORD_DIR names
a run, then hands over to the sitecustomize this one shadows, if any. It imports no torch, and a
failure here never stops the user's program.
"""

import importlib
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path


def _start() -> None:
    run = os.environ.get("GRAPHMEND_RECORD_DIR")
    library = os.environ.get("GRAPHMEND_RECORD_LIB")
    if not run or not library:
        return
    sys.path.insert(0, library)
    try:
        import atexit
        from pathlib import Path

        from graphmend.record.handler import install, uninstall
        from graphmend.record.runs import process_file

        handler = install(process_file(Path(run)))
        atexit.register(uninstall, handler)
        plan = os.environ.get("GRAPHMEND_PROVE_PLAN")
        if plan:
            _prove(Path(run), Path(plan))
    except Exception:  # noqa: BLE001  (never stop the user's program)
        pass
    finally:
        sys.path.remove(library)


def _prove(run: "Path", plan_file: "Path") -> None:  # noqa: UP037  (no pathlib import at start-up)
    """`fix --prove`: serve the plan's rewritten files, then observe the run (`record/probe.py`)."""
    import json

    from graphmend.record import probe, serve

    served = json.loads(plan_file.read_text(encoding="utf-8")).get("served", {})
    texts = {}
    for path, text_file in served.items():
        with open(text_file, encoding="utf-8") as served_text:
            texts[path] = served_text.read()
    serve.install(texts)
    probe.start(run, plan_file, serve.LOADED)


def _chain() -> None:
    """Import the sitecustomize this file shadows (the next one on the path), as Python would have."""
    here = os.path.dirname(os.path.abspath(__file__))
    saved = list(sys.path)
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != here]
    module = sys.modules.pop("sitecustomize", None)
    try:
        importlib.import_module("sitecustomize")
    except ImportError:
        pass
    except Exception:  # noqa: BLE001
        pass
    finally:
        sys.path[:] = saved
        if module is not None and "sitecustomize" not in sys.modules:
            sys.modules["sitecustomize"] = module


_start()
_chain()
