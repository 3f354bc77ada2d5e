"""Typed IR → OpenCL C text, per target."""
