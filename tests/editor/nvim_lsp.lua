-- Neovim's built-in LSP client (vim.lsp, Neovim 0.7) against `symdex lsp`, headless:
--   PATH=build/cli:$PATH SYMDEX_ROOT=/tmp/tree SYMDEX_NVIM_CONFIG=tests/editor/symdex.lua \
--     nvim --headless -u NONE -c 'luafile nvim_lsp.lua'     (from SYMDEX_ROOT)
-- SYMDEX_ROOT is a copy of tests/fixtures/golden with a compile_commands.json. It loads the
-- README's configuration (SYMDEX_NVIM_CONFIG), opens a file, jumps to a
-- definition, lists references and incoming calls, goes to an implementation and hovers the way a
-- user does (vim.lsp.buf.definition/references/incoming_calls/implementation/hover) and checks
-- where the cursor, the quickfix list and the hover window end up. Exits 0 on success, 1 with a message.
local root = assert(os.getenv('SYMDEX_ROOT'), 'SYMDEX_ROOT is not set')

local function finish(ok, message)
  io.stderr:write((ok and 'ok: ' or 'FAIL: ') .. message .. '\n')
  vim.cmd(ok and 'qall!' or 'cquit! 1')
end

local function check(condition, message)
  if not condition then
    finish(false, message)
    error(message) -- not reached: cquit exits
  end
end

-- The configuration the README shows (tests/editor/symdex.lua), as a user has it: files of type
-- cpp start the client and attach to it.
vim.cmd('filetype on')
vim.cmd('luafile ' .. os.getenv('SYMDEX_NVIM_CONFIG'))

vim.cmd('edit ' .. root .. '/src/main.cpp')
local buf = vim.api.nvim_get_current_buf()
local client_id = nil
check(vim.wait(30000, function()
  for _, c in pairs(vim.lsp.buf_get_clients(buf)) do
    if c.name == 'symdex' and c.initialized then
      client_id = c.id
      return true
    end
  end
  return false
end, 50), 'no symdex client attached to ' .. root .. '/src/main.cpp and initialized')
local client = vim.lsp.get_client_by_id(client_id)

-- The daemon indexes on start: wait until its first run is over.
check(vim.wait(120000, function()
  local r = client.request_sync('symdex/status', {}, 5000, buf)
  return r ~= nil and r.result ~= nil and r.result.state == 'idle' and r.result.runs >= 1
end, 100), 'the daemon did not finish indexing')

-- Go to definition: main.cpp:10 "return helper(circle) ..." -> main.cpp:3 "static int helper(".
vim.api.nvim_win_set_cursor(0, { 10, 12 }) -- (1-based line, 0-based byte column): on "helper"
vim.lsp.buf.definition()
check(vim.wait(10000, function()
  return vim.api.nvim_win_get_cursor(0)[1] == 3
end, 20), 'definition did not move the cursor to line 3, it is at ' ..
  vim.inspect(vim.api.nvim_win_get_cursor(0)))
local cursor = vim.api.nvim_win_get_cursor(0)
check(cursor[2] == 11, 'definition landed on column ' .. cursor[2] .. ', expected 11')
check(vim.api.nvim_buf_get_name(0) == root .. '/src/main.cpp', 'definition opened ' ..
  vim.api.nvim_buf_get_name(0))

-- Find references of geo::scale(int) from its definition in util.cpp:5 "int scale(int value)",
-- declaration included (Neovim asks with includeDeclaration = true).
vim.cmd('edit ' .. root .. '/src/util.cpp') -- attached by the FileType autocommand
vim.api.nvim_win_set_cursor(0, { 5, 5 })
vim.fn.setqflist({}, 'r')
vim.lsp.buf.references()
check(vim.wait(10000, function()
  return #vim.fn.getqflist() > 0
end, 20), 'references filled no quickfix list')
local found = {}
for _, item in ipairs(vim.fn.getqflist()) do
  local name = vim.api.nvim_buf_get_name(item.bufnr):sub(#root + 2)
  table.insert(found, string.format('%s:%d:%d', name, item.lnum, item.col))
end
table.sort(found)
local expected = {
  'include/shapes.h:45:5', 'src/broken.cpp:3:30', 'src/main.cpp:7:28', 'src/util.cpp:5:5',
}
check(vim.deep_equal(found, expected), 'references: got ' .. vim.inspect(found) ..
  ', expected ' .. vim.inspect(expected))

-- Incoming calls of helper (main.cpp:3): main calls it at main.cpp:10:12. Neovim asks
-- prepareCallHierarchy, then callHierarchy/incomingCalls, and lists the call sites in the
-- quickfix list (which it opens).
vim.cmd('edit ' .. root .. '/src/main.cpp')
vim.api.nvim_win_set_cursor(0, { 3, 12 })
vim.fn.setqflist({}, 'r')
vim.lsp.buf.incoming_calls()
check(vim.wait(10000, function()
  return #vim.fn.getqflist() > 0
end, 20), 'incoming calls filled no quickfix list')
local calls = {}
for _, item in ipairs(vim.fn.getqflist()) do
  local name = vim.api.nvim_buf_get_name(item.bufnr):sub(#root + 2)
  table.insert(calls, string.format('%s:%d:%d %s', name, item.lnum, item.col, item.text))
end
check(vim.deep_equal(calls, { 'src/main.cpp:10:12 main' }), 'incoming calls: got ' ..
  vim.inspect(calls))
vim.cmd('cclose')

-- Go to implementation of the virtual call shape.area() (main.cpp:3): the override's definition,
-- circle.cpp:11 "Area Circle::area() const".
vim.cmd('edit ' .. root .. '/src/main.cpp')
vim.api.nvim_win_set_cursor(0, { 3, 62 })
vim.lsp.buf.implementation()
check(vim.wait(10000, function()
  return vim.api.nvim_buf_get_name(0) == root .. '/src/circle.cpp'
end, 20), 'implementation did not open src/circle.cpp, but ' .. vim.api.nvim_buf_get_name(0))
local at = vim.api.nvim_win_get_cursor(0)
check(at[1] == 11 and at[2] == 13, 'implementation landed at ' .. vim.inspect(at) ..
  ', expected { 11, 13 }')

-- Hover on the same call: a floating window with the qualified name, the signature and where
-- it is declared.
vim.cmd('edit ' .. root .. '/src/main.cpp')
vim.api.nvim_win_set_cursor(0, { 3, 62 })
vim.lsp.buf.hover()
local hover = nil
check(vim.wait(10000, function()
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    if vim.api.nvim_win_get_config(win).relative ~= '' then
      hover = table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1,
        false), '\n')
      return true
    end
  end
  return false
end, 20), 'hover opened no floating window')
for _, expected_text in ipairs({ 'geo::Shape::area', 'virtual Area area() const = 0',
  'include/shapes.h:22' }) do
  check(hover:find(expected_text, 1, true) ~= nil, 'hover lacks "' .. expected_text .. '": ' ..
    hover)
end

finish(true, 'definition at src/main.cpp:3:12, references ' .. table.concat(found, ' ') ..
  ', incoming calls ' .. table.concat(calls, ' ') .. ', implementation at src/circle.cpp:11:14' ..
  ', hover shows the signature')
