"""Rich renderables of tau-tui's views, no textual: panels, cells, the trajectory document (the
inspector's view model). The TUI shows them in its widgets; the CLI may print the same ones."""
