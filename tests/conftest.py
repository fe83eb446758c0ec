"""Shared fixtures: paths of the project's sample and of ../shared/corpora (when present)."""
import os
import pathlib

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

REPO = pathlib.Path(__file__).resolve().parents[1]
SAMPLES = REPO / "samples"
SHARED = (REPO.parent / "shared" / "corpora").resolve()


@pytest.fixture(scope="session")
def shared_corpora() -> pathlib.Path:
    """../shared/corpora, or skip the test when this checkout has none."""
    if not SHARED.is_dir():
        pytest.skip("../shared/corpora is not present")
    return SHARED


# Hostile-input cases found at the last stop and not yet fixed (see the closing note of issue 8):
# expected to fail until the reader and renderer handle them.
KNOWN_HOSTILE_BUGS = {
    "test_each_case_has_its_status_reason_and_failure_rows_on_disk[broken gzip]",
    "test_each_case_ends_with_its_status_and_reason[broken gzip]",
    "test_time_budget_holds_inside_a_slow_stage",
    "test_control_characters_do_not_reach_the_plain_text",
}


def pytest_collection_modifyitems(items):
    for item in items:
        if item.name in KNOWN_HOSTILE_BUGS:
            item.add_marker(pytest.mark.xfail(reason="known hostile-input bug, open", strict=False))
