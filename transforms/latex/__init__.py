"""LaTeX to theorem-like statements: small pure functions, one rule each, no Beam."""
