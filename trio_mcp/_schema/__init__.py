"""Private subpackage; see the module docstrings."""
