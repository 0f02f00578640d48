"""`whole_number`: the one check of every integer the importers read."""

from __future__ import annotations

import pytest

from capture.importers.values import queue_id_value, whole_number


@pytest.mark.parametrize(("value", "bits", "expected"), [
    ("42", 64, 42), (" -7 ", 64, -7), (7, 32, 7), (10.0, 64, 10),
    (2**31 - 1, 32, 2**31 - 1), (-(2**63), 64, -(2**63)),
])
def test_whole_numbers_a_column_holds(value, bits, expected):
    assert whole_number(value, "x", bits=bits) == expected


@pytest.mark.parametrize(("value", "bits", "message"), [
    ("99999999999999999999", 64, "x 99999999999999999999 is beyond a 64-bit integer"),
    ("3000000000", 32, "x 3000000000 is beyond a 32-bit integer"),
    ("9" * 5000, 64, f"x {'9' * 20}... (5,000 characters) is beyond a 64-bit integer"),
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


@pytest.mark.parametrize("text", ["1_000", "+120", "\u0661\u0662", "\uff15", "12 3", ""])
def test_text_no_tool_prints_as_a_number_is_refused(text):
    """Python's int() reads "1_000", "+120" and other scripts' digits; the tools print
    ASCII digits and a minus: anything else is a garbled line."""
    with pytest.raises(ValueError, match="is not a whole number"):
        whole_number(text, "x")


def test_a_queue_id_is_never_negative():
    assert queue_id_value("7", "#QID") == 7
    for value, message in (("-1", "#QID -1 is negative"),
                           (2**31, "#QID 2147483648 is beyond a 32-bit integer")):
        with pytest.raises(ValueError, match=message):
            queue_id_value(value, "#QID")
