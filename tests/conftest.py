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



def pytest_addoption(parser):
    parser.addoption("--update-golden", action="store_true",
                     help="rewrite tests/golden/ from the current extraction instead of comparing to it")


@pytest.fixture(scope="session")
def update_golden(request) -> bool:
    """True when golden files are to be regenerated (`--update-golden` or THMFORGE_UPDATE_GOLDEN=1)."""
    return request.config.getoption("--update-golden") or os.environ.get("THMFORGE_UPDATE_GOLDEN") == "1"
