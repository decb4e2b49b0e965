"""framejit.guards — see the package README and DESIGN.md."""
