-- symdex as the C/C++ language server of Neovim 0.7+ (built-in vim.lsp). Put this in init.lua,
-- or :luafile it. One `symdex lsp` per Neovim, rooted at the directory Neovim started in, which
-- must hold compile_commands.json (or build/compile_commands.json); it starts symdexd if needed.
-- tests/editor/nvim_lsp.lua loads this very file, so it is what the tests exercise.
local symdex_client = nil
vim.api.nvim_create_autocmd('FileType', {
  pattern = { 'c', 'cpp' },
  callback = function(args)
    if symdex_client == nil or vim.lsp.client_is_stopped(symdex_client) then
      local root = vim.fn.getcwd()
      symdex_client = vim.lsp.start_client({
        name = 'symdex',
        cmd = { 'symdex', 'lsp', '--root', root },
        root_dir = root,
      })
    end
    vim.lsp.buf_attach_client(args.buf, symdex_client)
  end,
})
