-- graphmend-lsp for Neovim 0.7 through 0.11+, no plugin manager or lspconfig needed: put this file on
-- your runtimepath as plugin/graphmend.lua (e.g. ~/.config/nvim/plugin/graphmend.lua). graphmend-lsp
-- must be on PATH (installed from a clone: docs/editors.md), or set
-- vim.g.graphmend_cmd = { '/path/to/graphmend-lsp', '--stdio' }.
-- :GraphmendFixAll applies the safe fixes, :GraphmendFixAllUnsafe all of them after showing what they
-- may change; the server says what it did and left either way. A server that dies says so.
--   0.11+     vim.lsp.config + vim.lsp.enable (what editors/neovim/lsp/graphmend.lua gives on its own)
--   0.8-0.10  vim.lsp.start on each Python buffer (one client per project root)
--   0.7       vim.lsp.start_client once per root, then vim.lsp.buf_attach_client (Debian 12's package)
if vim.g.loaded_graphmend then
  return
end
vim.g.loaded_graphmend = true

local cmd = vim.g.graphmend_cmd or { 'graphmend-lsp', '--stdio' }
local init_options = { graphmend = { run = 'onType', debounce = 150 } }

-- A server that exits other than after Neovim's own shutdown request is a crash: say so once, where
-- the user looks, instead of leaving the diagnostics silently stale.
local function on_exit(code, signal)
  if code ~= 0 or (signal or 0) ~= 0 then
    vim.schedule(function()
      vim.notify(
        string.format('graphmend-lsp exited (code %d, signal %d); its output is in :lua print(vim.lsp.get_log_path())',
          code, signal or 0),
        vim.log.levels.ERROR
      )
    end)
  end
end

local function graphmend_client(bufnr)
  local clients = vim.lsp.get_clients and vim.lsp.get_clients({ bufnr = bufnr, name = 'graphmend' })
    or vim.tbl_filter(function(c) return c.name == 'graphmend' end, vim.tbl_values(vim.lsp.buf_get_clients(bufnr)))
  return clients[1]
end

local function execute(client, bufnr, command, arguments, on_result)
  client.request('workspace/executeCommand', { command = command, arguments = arguments }, function(err, result)
    if err then
      vim.notify('graphmend: ' .. command .. ' failed: ' .. tostring(err.message), vim.log.levels.ERROR)
    elseif on_result then
      on_result(result)
    end
  end, bufnr)
end

-- Fix All through the server's command, on every Neovim from 0.7 (whose code_action takes no `apply`):
-- the server applies the edit and reports what it did in a message, also when it applied nothing.
local function fix_all(unsafe)
  local bufnr = vim.api.nvim_get_current_buf()
  local client = graphmend_client(bufnr)
  if client == nil then
    vim.notify('graphmend: no graphmend-lsp attached to this buffer', vim.log.levels.WARN)
    return
  end
  local uri = vim.uri_from_bufnr(bufnr)
  if not unsafe then
    return execute(client, bufnr, 'graphmend.applyAllFixes', { uri })
  end
  execute(client, bufnr, 'graphmend.unsafeFixes', { uri }, function(preview)
    if preview == nil or preview.unsafeAvailable == 0 then
      vim.notify('graphmend: no unsafe fix to apply', vim.log.levels.INFO)
      return
    end
    local question = string.format('graphmend: apply %d unsafe fix%s?\n\n%s', preview.unsafeAvailable,
      preview.unsafeAvailable == 1 and '' or 'es', preview.detail)
    if vim.fn.confirm(question, '&Cancel\n&Apply', 1) == 2 then
      execute(client, bufnr, 'graphmend.applyAllFixes', { uri, true })
    end
  end)
end

vim.api.nvim_create_user_command('GraphmendFixAll', function() fix_all(false) end,
  { desc = 'graphmend: apply the safe fixes in this file' })
vim.api.nvim_create_user_command('GraphmendFixAllUnsafe', function() fix_all(true) end,
  { desc = 'graphmend: apply every fix in this file, after showing what the unsafe ones may change' })

if vim.lsp.config and vim.lsp.enable then
  vim.lsp.config('graphmend', {
    cmd = cmd,
    filetypes = { 'python' },
    root_markers = { 'pyproject.toml', '.git' },
    init_options = init_options,
    on_exit = on_exit,
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
    local config = { name = 'graphmend', cmd = cmd, root_dir = root, init_options = init_options, on_exit = on_exit }
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
