"""coder_ls: a coding agent behind the Language Server Protocol."""

__version__ = "0.1.0"
