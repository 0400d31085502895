-- graphmend-lsp for Neovim 0.7 through 0.11+, no plugin manager or lspconfig needed: put this file on
-- your runtimepath as plugin/graphmend.lua (e.g. ~/.config/nvim/plugin/graphmend.lua). graphmend-lsp
-- must be on PATH (pip install graphmend), or set vim.g.graphmend_cmd = { '/path/to/graphmend-lsp', '--stdio' }.
--   0.11+     vim.lsp.config + vim.lsp.enable (what editors/neovim/lsp/graphmend.lua gives on its own)
--   0.8-0.10  vim.lsp.start on each Python buffer (one client per project root)
--   0.7       vim.lsp.start_client once per root, then vim.lsp.buf_attach_client (Debian 12's package)
if vim.g.loaded_graphmend then
  return
end
vim.g.loaded_graphmend = true

local cmd = vim.g.graphmend_cmd or { 'graphmend-lsp', '--stdio' }
local init_options = { graphmend = { run = 'onType', debounce = 150 } }

if vim.lsp.config and vim.lsp.enable then
  vim.lsp.config('graphmend', {
    cmd = cmd,
    filetypes = { 'python' },
    root_markers = { 'pyproject.toml', '.git' },
    init_options = init_options,
  })
  vim.lsp.enable('graphmend')
  return
end

-- The project root of a file: the nearest folder with a pyproject.toml or .git, else the file's folder.
-- vim.fn.findfile/finddir, since vim.fs (0.8) is missing on 0.7.
local function root_of(file)
  local folder = vim.fn.fnamemodify(file, ':p:h')
  local marker = vim.fn.findfile('pyproject.toml', folder .. ';')
  if marker == '' then
    marker = vim.fn.finddir('.git', folder .. ';')
  end
  return marker ~= '' and vim.fn.fnamemodify(marker, ':p:h:s?/\\.git$??') or folder
end

local clients = {} -- root → client id (0.7)

vim.api.nvim_create_autocmd('FileType', {
  pattern = 'python',
  group = vim.api.nvim_create_augroup('graphmend', { clear = true }),
  callback = function(args)
    local file = vim.api.nvim_buf_get_name(args.buf)
    if file == '' then
      return
    end
    local root = root_of(file)
    local config = { name = 'graphmend', cmd = cmd, root_dir = root, init_options = init_options }
    if vim.lsp.start then
      vim.lsp.start(config, { bufnr = args.buf })
      return
    end
    local id = clients[root]
    if id == nil or vim.lsp.get_client_by_id(id) == nil then
      id = vim.lsp.start_client(config)
      clients[root] = id
    end
    if id then
      vim.lsp.buf_attach_client(args.buf, id)
    end
  end,
})
