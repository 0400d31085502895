#!/usr/bin/env bash
# Puts graphmend and its pure-Python dependencies into bundled/libs, so that the .vsix starts the
# server with the user's own Python and no `pip install` (bundled/tool/graphmend_lsp.py). Wheels
# for any Python >= 3.10 (`--implementation py`: no compiled code); pinned, so a package is the
# same every time. LibCST (compiled) and nbformat (only for .ipynb files on disk) stay optional.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf bundled/libs
python3 -m pip install --quiet --no-deps --target bundled/libs --implementation py --only-binary=:all: \
  'pygls==2.1.1' 'lsprotocol==2025.0.0' 'cattrs==26.2.1' 'attrs==26.1.0' 'typing_extensions==4.16.0' \
  'exceptiongroup==1.3.1' 'tomli==2.3.0'
python3 -m pip install --quiet --no-deps --target bundled/libs ..
rm -rf bundled/libs/bin bundled/libs/*.dist-info/RECORD
find bundled/libs -name __pycache__ -type d -prune -exec rm -rf {} +
echo "bundled/libs: $(du -sh bundled/libs | cut -f1), $(ls bundled/libs | grep -vc dist-info) packages"
