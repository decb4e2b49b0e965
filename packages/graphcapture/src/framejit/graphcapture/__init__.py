"""framejit.graphcapture — see the package README and DESIGN.md."""
