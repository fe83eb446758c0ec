"""LaTeX to theorem-like statements: small pure functions, one rule each, no Beam.

Layers, bottom up: `scan` reads tokens and arguments; `definitions` collects macro definitions into a
table and `macros` expands with it; `declarations` knows every theorem command and prepares the
preamble discovery and numbering read; `extract` runs the steps in order.
"""
