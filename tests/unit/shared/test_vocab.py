"""The domain vocabulary (mnemo.vocab): kinds from the protos' enum, display ids and their one
parser, summary fields, stop-words."""

from __future__ import annotations

import subprocess
import sys

import pytest

from mnemo import vocab
from mnemo.v1 import common_pb2
from tests.conftest import REPO_ROOT

pytestmark = pytest.mark.unit

KINDS = [v.number for v in common_pb2.DocKind.DESCRIPTOR.values if v.number != common_pb2.DOC_KIND_UNSPECIFIED]


def test_kind_names_are_the_record_messages_oneof_names():
    """The name of a kind is the proto's own (Record's oneof), so a layer that dispatches on the
    oneof (vector documents, the viewer, structuredContent) and one that shows the name agree."""
    oneof = common_pb2.Record.DESCRIPTOR.oneofs_by_name["record"]
    assert set(vocab.KIND_NAMES.values()) == {field.name for field in oneof.fields}


def test_every_kind_of_the_proto_has_a_name_and_a_display_prefix():
    assert sorted(vocab.KIND_NAMES) == sorted(KINDS) == sorted(vocab.DISPLAY_PREFIX)
    assert {vocab.KIND_BY_NAME[name] for name in vocab.KIND_NAMES.values()} == set(KINDS)


@pytest.mark.parametrize("kind", KINDS)
def test_a_display_id_parses_back_to_its_record(kind):
    shown = vocab.display_id(kind, 1234)
    assert vocab.parse_display_id(shown) == (kind, 1234)
    assert vocab.parse_display_id(shown.lstrip("#")) == (kind, 1234)
    assert vocab.parse_display_id(shown.lower()) == (kind, 1234)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("#12", (vocab.KIND_OBSERVATION, 12)),
        ("12", (vocab.KIND_OBSERVATION, 12)),
        ("S3", (vocab.KIND_SUMMARY, 3)),
        ("#p7", (vocab.KIND_PROMPT, 7)),
        ("9" * 18, (vocab.KIND_OBSERVATION, int("9" * 18))),
    ],
)
def test_the_parser_reads_each_written_form(text, expected):
    assert vocab.parse_display_id(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "",
        "#",
        "S",
        "##12",
        "#12\n",
        " 12",
        "12a",
        "X12",
        "#S-1",
        "1" * 19,
        "\u0663",  # an Arabic-Indic three
    ],
)
def test_the_parser_refuses_anything_else(text):
    assert vocab.parse_display_id(text) is None


def test_a_kind_the_vocabulary_lacks_is_shown_as_unknown_not_as_an_observation():
    assert vocab.display_id(99, 5) == "#?5"


def test_summary_fields_are_the_summary_messages_text_fields_in_proto_order():
    names = [f.name for f in common_pb2.Summary.DESCRIPTOR.fields]
    assert [n for n in names if n in vocab.SUMMARY_FIELDS] == list(vocab.SUMMARY_FIELDS)


def test_observation_text_fields_are_fields_of_the_observation_message():
    names = {f.name for f in common_pb2.Observation.DESCRIPTOR.fields}
    assert set(vocab.OBSERVATION_TEXT_FIELDS) <= names


def test_stop_words_are_lowercase_words():
    assert all(word.isalpha() and word == word.lower() for word in vocab.STOP_WORDS)
    assert {"the", "and", "please"} <= vocab.STOP_WORDS


def test_reading_the_vocabulary_loads_no_protobuf_until_a_kind_is_used():
    code = (
        "import sys; import mnemo.vocab as v; v.SUMMARY_FIELDS; assert 'google.protobuf' not in sys.modules; "
        "assert v.KIND_NAMES[v.KIND_SUMMARY] == 'summary'; assert 'google.protobuf' in sys.modules"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_a_name_the_vocabulary_lacks_is_an_attribute_error():
    with pytest.raises(AttributeError, match="has no attribute 'KIND_NOPE'"):
        _ = vocab.KIND_NOPE  # type: ignore[attr-defined]
