"""framejit.inductor_lite — see the package README and DESIGN.md."""
