-- Drives real Neovim (headless) with the shipped plugin on a file whose only fix is unsafe: Fix All
-- (:GraphmendFixAll) must show graphmend's own report, not Neovim's "No code actions available"; then
-- the server is killed and the plugin must say so. Results go to $GRAPHMEND_RESULT as JSON.
-- Uses only APIs Neovim 0.7 has, so Debian's package can run it.
local result = {}

local function finish()
  result.messages = vim.fn.execute("messages")
  result.buffer = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), "\n")
  local handle = io.open(os.getenv("GRAPHMEND_RESULT"), "w")
  handle:write(vim.fn.json_encode(result))
  handle:close()
  vim.cmd("qa!")
end

local function messages_contain(text)
  return vim.fn.execute("messages"):find(text, 1, true) ~= nil
end

vim.cmd("filetype on")
vim.cmd("luafile " .. vim.fn.fnameescape(os.getenv("GRAPHMEND_NVIM_CONFIG")))
vim.cmd("edit " .. vim.fn.fnameescape(os.getenv("GRAPHMEND_FILE")))
local bufnr = vim.api.nvim_get_current_buf()
if not vim.wait(30000, function() return #vim.diagnostic.get(bufnr) > 0 end, 50) then
  result.error = "no diagnostics within 30 s"
  return finish()
end

vim.cmd("GraphmendFixAll")
result.reported = vim.wait(20000, function() return messages_contain("applied 0 safe fixes") end, 50)

local client = vim.tbl_values(vim.lsp.buf_get_clients(bufnr))[1]
vim.loop.kill(client.rpc.pid, 9)
result.exit_reported = vim.wait(20000, function() return messages_contain("graphmend-lsp exited") end, 50)
finish()
