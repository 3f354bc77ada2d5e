"""Python AST → typed IR."""
