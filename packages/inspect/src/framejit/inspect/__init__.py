"""framejit.inspect — see the package README and DESIGN.md."""
