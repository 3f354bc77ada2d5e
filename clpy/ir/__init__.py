"""Typed IR nodes and passes."""
