"""framejit.frameeval — see the package README and DESIGN.md."""
