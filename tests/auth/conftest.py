"""The auth tests' fixtures: a real authorization server (oauth_provider.py)."""

from oauth_provider import provider, signing_key

__all__ = ["provider", "signing_key"]
