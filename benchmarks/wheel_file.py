"""One file of a released torch wheel, read with HTTP range requests (a few hundred KB instead of a
multi-GB download): how the first releases with an API were found (`torch.compiler.config.
reorderable_logging_functions` from 2.10, the positional in-graph print from 2.11).

    python benchmarks/wheel_file.py 2.10.0 torch/compiler/config.py | grep reorderable
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import urllib.request
import zipfile

INDEX = "https://pypi.org/simple/torch/"


class RemoteFile(io.RawIOBase):
    """A seekable read-only view of a URL: each read is one range request."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.position = 0
        head = urllib.request.Request(url, method="HEAD")
        self.size = int(urllib.request.urlopen(head, timeout=60).headers["Content-Length"])

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self.position, io.SEEK_END: self.size}[whence]
        self.position = base + offset
        return self.position

    def tell(self) -> int:
        return self.position

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        end = min(self.position + len(buffer), self.size)
        if end <= self.position:
            return 0
        request = urllib.request.Request(self.url, headers={"Range": f"bytes={self.position}-{end - 1}"})
        data = urllib.request.urlopen(request, timeout=60).read()
        buffer[: len(data)] = data
        self.position += len(data)
        return len(data)


def wheel_url(version: str) -> str:
    """The CPython 3.11 manylinux x86-64 wheel of that torch release, from PyPI's JSON index."""
    request = urllib.request.Request(INDEX, headers={"Accept": "application/vnd.pypi.simple.v1+json"})
    files = json.load(urllib.request.urlopen(request, timeout=60))["files"]
    return next(
        f["url"]
        for f in files
        if f["filename"].startswith(f"torch-{version}-cp311")
        and "manylinux" in f["filename"]
        and "x86_64" in f["filename"]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("version", help="a torch release, e.g. 2.10.0")
    parser.add_argument("member", help="a path inside the wheel, e.g. torch/compiler/config.py")
    args = parser.parse_args()
    wheel = zipfile.ZipFile(io.BufferedReader(RemoteFile(wheel_url(args.version)), buffer_size=1 << 20))
    sys.stdout.write(wheel.read(args.member).decode("utf-8"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
