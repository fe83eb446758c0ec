"""Benchmark construction: a registry of data-structure tasks with reference implementations."""
