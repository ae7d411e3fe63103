"""The wire without I/O: messages, codes, versions, request state."""
