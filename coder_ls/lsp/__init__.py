"""The LSP edge: the only package that speaks LSP and converts to and from its types."""
