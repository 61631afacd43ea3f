"""The Agent Client Protocol edge: `coder-ls --acp`, beside lsp/, speaking to the engine through Host only."""
