"""mnemo.errors: one taxonomy, codes are gRPC status names, from_code() rebuilds every class."""

from __future__ import annotations

import grpc
import pytest

from mnemo import errors

pytestmark = pytest.mark.unit


@pytest.mark.parametrize("cls", errors.ALL_ERRORS, ids=lambda c: c.__name__)
def test_each_class_round_trips_through_its_code(cls):
    original = cls("field_y", "must be positive") if cls is errors.InvalidArgument else cls(f"{cls.__name__} text")
    assert hasattr(grpc.StatusCode, cls.code)
    rebuilt = errors.from_code(cls.code, str(original))
    assert type(rebuilt) is cls and str(rebuilt) == str(original)


def test_codes_are_unique_and_unknown_codes_become_internal():
    assert len(errors.BY_CODE) == len(errors.ALL_ERRORS)
    assert isinstance(errors.from_code("DATA_LOSS", "x"), errors.Internal)


def test_invalid_argument_keeps_field_and_rule():
    err = errors.from_code("INVALID_ARGUMENT", "observations[3].type: required")
    assert (err.field, err.rule) == ("observations[3].type", "required")
    bare = errors.from_code("INVALID_ARGUMENT", "no separator")
    assert (bare.field, bare.rule) == ("request", "no separator")
