"""`coder-ls exec`: one submission in the current folder, without an editor (contract section 22).

The third edge over the same engine, beside the LSP edge (`coder_ls/lsp/`) and the ACP one
(`coder_ls/acp/`): it builds the folder's engine (`wiring.build_engine`), runs one
`coder.input` through `Engine.submit` and ends. The engine never imports it.

- `args.py`: the command line, and the `--allow`/`--deny` rules (the `allowed-tools`
  syntax of section 10) as the turn's grants;
- `output.py`: the `Host` it gives the engine: the events on stdout (plain text, or one
  JSON object per line, the payloads of `coder/event`), every question answered "no"
  and said on stderr (there is no terminal to ask on);
- `run.py`: the run itself, its signals (SIGINT ends the turn cleanly) and exit codes.
"""
