"""The panel's routers: pages, read-only API, changes, live updates."""
