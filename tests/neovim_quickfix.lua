-- Drives real Neovim (headless) against graphmend-lsp: open a file, wait for diagnostics, apply the
-- graphmend quick fix, write the buffer. Results go to $GRAPHMEND_RESULT as JSON.
-- Uses only APIs Neovim 0.7 has (vim.lsp.start_client), so Debian's package can run it.
local file = os.getenv("GRAPHMEND_FILE")
local result_path = os.getenv("GRAPHMEND_RESULT")
local result = { diagnostics = {}, applied = false }

local function finish()
  local handle = io.open(result_path, "w")
  handle:write(vim.fn.json_encode(result))
  handle:close()
  vim.cmd("qa!")
end

-- The shipped configuration, as a user installs it: editors/neovim/plugin/graphmend.lua, which picks
-- vim.lsp.config on 0.11+, vim.lsp.start on 0.8+, vim.lsp.start_client on 0.7 (Debian 12's package).
-- graphmend-lsp comes from PATH.
vim.cmd("filetype on")
vim.cmd("luafile " .. vim.fn.fnameescape(os.getenv("GRAPHMEND_NVIM_CONFIG")))
vim.cmd("edit " .. vim.fn.fnameescape(file))
local bufnr = vim.api.nvim_get_current_buf()
local function attached()
  return (vim.lsp.get_clients or vim.lsp.get_active_clients)({ bufnr = bufnr })
end
vim.wait(10000, function() return #attached() > 0 end, 50)
if #attached() == 0 then
  result.error = "the plugin attached no client to " .. vim.bo.filetype .. " buffer " .. file
  return finish()
end
local client_id = attached()[1].id
result.neovim = tostring(vim.version().major) .. "." .. tostring(vim.version().minor)

local got = vim.wait(30000, function() return #vim.diagnostic.get(bufnr) > 0 end, 50)
if not got then
  result.error = "no diagnostics within 30 s"
  return finish()
end
for _, d in ipairs(vim.diagnostic.get(bufnr)) do
  table.insert(result.diagnostics, { code = d.code or (d.user_data and d.user_data.lsp and d.user_data.lsp.code),
                                     line = d.lnum, col = d.col, source = d.source, message = d.message })
end

local client = vim.lsp.get_client_by_id(client_id)
local diagnostic = vim.diagnostic.get(bufnr)[1]
local lsp_range = {
  start = { line = diagnostic.lnum, character = diagnostic.col },
  ["end"] = { line = diagnostic.end_lnum, character = diagnostic.end_col },
}
-- Neovim 0.7 keeps only the LSP-specific fields in user_data.lsp: rebuild the whole diagnostic.
local extra = diagnostic.user_data and diagnostic.user_data.lsp or {}
local lsp_diagnostic = { range = lsp_range, message = diagnostic.message, code = diagnostic.code,
                         source = diagnostic.source, severity = diagnostic.severity, data = extra.data }
local params = {
  textDocument = { uri = vim.uri_from_bufnr(bufnr) },
  range = { start = { line = diagnostic.lnum, character = diagnostic.col },
            ["end"] = { line = diagnostic.end_lnum, character = diagnostic.end_col } },
  context = { diagnostics = { lsp_diagnostic } },
}
local response, request_error = client.request_sync("textDocument/codeAction", params, 20000, bufnr)
if not response or response.err then
  result.error = "codeAction failed: " .. vim.inspect(response) .. " " .. vim.inspect(request_error)
  return finish()
end
for _, action in ipairs(response.result or {}) do
  if action.title:find("torch.where", 1, true) then
    if not action.edit then
      local resolved = client.request_sync("codeAction/resolve", action, 20000, bufnr)
      action = resolved and resolved.result or action
    end
    if action.edit then
      vim.lsp.util.apply_workspace_edit(action.edit, client.offset_encoding or "utf-16")
      result.applied = true
      result.title = action.title
    end
  end
end
vim.cmd("write")
result.buffer = table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n")
finish()
