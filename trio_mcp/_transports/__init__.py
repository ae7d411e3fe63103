"""Each transport adapts a medium to the dispatcher's single entry point."""
