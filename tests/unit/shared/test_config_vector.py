"""`vector = "off"` (full-text only): which services a local stack runs."""

from __future__ import annotations

import pytest

from mnemo.config import local_services, with_overrides
from mnemo.errors import InvalidArgument


def test_local_services_follow_the_setting(settings):
    assert local_services(settings) == ("store", "vector", "search")
    assert local_services(with_overrides(settings, vector="off")) == ("store", "search")
    with pytest.raises(InvalidArgument) as refused:
        local_services(with_overrides(settings, vector="no"))
    assert refused.value.field == "vector" and "on" in refused.value.rule
