"""Scoring of benchmark answers, no LLM judge: parse the response (`parse`), canonicalize the typed
answer (`canonical`), compare (`metrics`: exact, partial, structural), one row per prediction
(`score`), mean and std over trials (`diagnostics`), `report.md` with plots (`report`), and the
evaluation tables on disk (`tables`)."""
