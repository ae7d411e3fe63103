"""The package version, read by the build backend and by ``server/discover``."""

__version__ = "0.1.0"
