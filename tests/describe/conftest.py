import pytest

from describe_helpers import sample_rows


@pytest.fixture
def rows():
    return sample_rows()
