"""Probe suites: the same operations told as stories (natural) or shown as programs (code)."""
