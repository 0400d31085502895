#!/usr/bin/env bash
# graphmend in real JupyterLab: starts JupyterLab (with jupyterlab-lsp and graphmend installed in
# the environment of $JUPYTER) on a copy of the demo notebook, and checks it in headless Chromium
# (run-e2e.mjs). Usage: JUPYTER=/path/to/venv/bin/jupyter bash editors/jupyterlab/run-e2e.sh OUT.png
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
screenshot="$(realpath -m "${1:-$root/editors/jupyterlab/.e2e/jupyterlab.png}")"
jupyter="${JUPYTER:-jupyter}"
playwright="${PLAYWRIGHT_DIR:-$root/vscode-extension/.e2e/node_modules/playwright-core}"
chromium="${CHROMIUM:-$(command -v chromium || command -v chromium-browser)}"
scratch="$(mktemp -d)"
workspace="$scratch/workspace"
mkdir -p "$workspace" "$(dirname "$screenshot")" "$scratch/home"
cp "$root/vscode-extension/e2e/demo.ipynb" "$root/examples/figure1.py" "$workspace/"
# JupyterLab asks on first start whether to fetch its news: answered here, so no toast hides a cell.
notification="$scratch/home/.jupyter/lab/user-settings/@jupyterlab/apputils-extension"
mkdir -p "$notification"
echo '{"fetchNews": "false", "checkForUpdates": false}' >"$notification/notification.jupyterlab-settings"
port="$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')"
token="graphmend-e2e"
# A home of its own: no user settings or workspaces of JupyterLab's change what the test sees.
HOME="$scratch/home" JUPYTER_CONFIG_DIR="$scratch/home/.jupyter" "$jupyter" lab --no-browser \
  --ServerApp.ip=127.0.0.1 --ServerApp.port="$port" --IdentityProvider.token="$token" \
  --ServerApp.root_dir="$workspace" --allow-root >"$scratch/jupyterlab.log" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null || true; wait $server 2>/dev/null || true' EXIT
for _ in $(seq 120); do
  curl -s -o /dev/null "http://127.0.0.1:$port/api/status?token=$token" && break
  sleep 0.5
done
if ! node "$here/run-e2e.mjs" --url "http://127.0.0.1:$port/lab/tree" --token "$token" \
    --screenshot "$screenshot" --chromium "$chromium" --playwright "$(dirname "$playwright")/.."; then
  echo "--- last lines of the JupyterLab log ($scratch/jupyterlab.log) ---"
  tail -30 "$scratch/jupyterlab.log"
  exit 1
fi
