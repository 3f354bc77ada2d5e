"""The ``clpy`` command line (``clpy --help``; ``python -m clpy``)."""

from clpy.cli.main import main, parser

__all__ = ["main", "parser"]
