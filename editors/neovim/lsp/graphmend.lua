-- Neovim 0.11+: put this file on your runtimepath as lsp/graphmend.lua, then: vim.lsp.enable('graphmend')
return {
  cmd = { 'graphmend-lsp', '--stdio' },
  filetypes = { 'python' },
  root_markers = { 'pyproject.toml', '.git' },
  init_options = { graphmend = { run = 'onType', debounce = 150 } },
  settings = { graphmend = {} },
}
