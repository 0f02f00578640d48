"""`whole_number`: the one check of every integer the importers read."""

from __future__ import annotations

import pytest

from capture.importers.values import whole_number


@pytest.mark.parametrize(("value", "bits", "expected"), [
    ("42", 64, 42), (" -7 ", 64, -7), (7, 32, 7), (10.0, 64, 10),
    (2**31 - 1, 32, 2**31 - 1), (-(2**63), 64, -(2**63)),
])
def test_whole_numbers_a_column_holds(value, bits, expected):
    assert whole_number(value, "x", bits=bits) == expected


@pytest.mark.parametrize(("value", "bits", "message"), [
    ("99999999999999999999", 64, "x 99999999999999999999 is beyond a 64-bit integer"),
    ("3000000000", 32, "x 3000000000 is beyond a 32-bit integer"),
    (float("inf"), 64, "x inf is not a whole number"),
    (10.9, 64, "x 10.9 is not a whole number"),
    ("1O", 64, "x '1O' is not a whole number"),
    (True, 64, "x True is not a whole number"),
    (None, 64, "x 'None' is not a whole number"),
])
def test_anything_else_is_a_value_error_naming_it(value, bits, message):
    with pytest.raises(ValueError) as error:
        whole_number(value, "x", bits=bits)
    assert str(error.value) == message
