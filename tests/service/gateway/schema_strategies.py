"""Hypothesis strategies for a tool's arguments, read from its own inputSchema: valid values,
values on and just past every bound, and hostile ones (wrong types, huge strings, control
characters, FTS5 and SQL syntax, CJK, emoji, private regions)."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

INT64_MAX = 2**63 - 1
HOSTILE_TEXTS = [
    '"unterminated phrase',
    'title:"x" NEAR(a b, 3) OR c NOT d AND ^e*',
    "*",
    "'; DROP TABLE observations; --",
    "1' OR '1'='1",
    "%_\\ ESCAPE",
    "\x00\x01\x07\x1b[31m\x7f\u0085",
    "\u202e\u200b\ufeff",
    "日本語のテキストを検索する",
    "用户登录后重定向失败",
    "😀🔥👩‍💻 emoji",
    "<private>never-echo-this</private> visible",
    "<private>unclosed private region",
    "#12",
    "S3",
    "P7",
    "ms_" + "a" * 24,
    "2026-02-30T25:61:00Z",
    "-1",
    "99999999999999999999999",
    "é" * 600,
    "x" * 100_000,
    "y" * 4_000_000,
]
WRONG_TYPES = st.one_of(
    st.none(), st.booleans(), st.just(2.5), st.just(-0.0), st.just(1e308),
    st.sampled_from([2**63, -(2**63) - 1, 2**64, 10**30]),
    st.lists(st.integers(-3, 3), max_size=3), st.dictionaries(st.text(max_size=4), st.integers(), max_size=2),
    st.sampled_from(HOSTILE_TEXTS),
)


def _types(schema: dict[str, Any]) -> list[str]:
    declared = schema.get("type", [])
    return declared if isinstance(declared, list) else [declared]


def valid(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    options = []
    for kind in _types(schema):
        if kind == "string":
            options.append(_valid_string(schema))
        elif kind == "integer":
            options.append(st.integers(schema.get("minimum", -(2**63)), schema.get("maximum", INT64_MAX)))
        elif kind == "array":
            items = schema.get("items", {})
            options.append(st.lists(valid(items), min_size=schema.get("minItems", 0),
                                    max_size=min(schema.get("maxItems", 5), 5)))
        elif kind == "boolean":
            options.append(st.booleans())
    return st.one_of(options) if options else st.none()


def _valid_string(schema: dict[str, Any]) -> st.SearchStrategy[str]:
    low, high = schema.get("minLength", 0), schema.get("maxLength", 200)
    if "pattern" in schema:
        return st.from_regex(schema["pattern"], fullmatch=True).filter(lambda s: low <= len(s) <= high)
    return st.text(min_size=low, max_size=min(high, 80))


def boundary(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    options: list[st.SearchStrategy[Any]] = []
    kinds = _types(schema)
    if "integer" in kinds:
        low, high = schema.get("minimum", -(2**63)), schema.get("maximum", INT64_MAX)
        options.append(st.sampled_from([low, high, low - 1, high + 1, float(low), float(high), float(high) + 1.0]))
    if "string" in kinds and "maxLength" in schema:
        top = schema["maxLength"]
        options.append(st.sampled_from(["a" * top, "a" * (top + 1), "é" * top, "\u4e2d" * top]))
    if "array" in kinds:
        most = schema.get("maxItems", 5)
        options.append(valid(schema.get("items", {})).map(lambda item: [item] * (most + 1)))
        options.append(st.just([]))
    return st.one_of(options) if options else valid(schema)


def weighted(*choices: tuple[int, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """One of the strategies, picked in proportion to its weight (st.one_of flattens nested
    one_ofs, so a strategy with many branches would otherwise crowd out the rest)."""
    slots = [strategy for weight, strategy in choices for _ in range(weight)]
    return st.integers(0, len(slots) - 1).flatmap(lambda index: slots[index])


def value(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    # Valid values are drawn most often, so that many calls get past validation and
    # reach the services with hostile-but-legal text (FTS5 syntax, CJK, private tags).
    free_text = "string" in _types(schema) and "pattern" not in schema and "enum" not in schema
    legal_text = st.sampled_from(HOSTILE_TEXTS) if free_text else valid(schema)
    return weighted((6, valid(schema)), (3, legal_text), (1, boundary(schema)), (1, WRONG_TYPES))


def arguments(input_schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Argument objects (required properties usually present, optional ones sometimes,
    an unknown key now and then), and now and then no object at all."""
    properties: dict[str, Any] = input_schema.get("properties", {})
    required = set(input_schema.get("required", []))
    objects = st.fixed_dictionaries(
        {name: value(properties[name]) for name in sorted(required)},
        optional={name: value(schema) for name, schema in properties.items() if name not in required},
    )
    with_unknown = st.tuples(objects, st.sampled_from(["unknown", "k" * 10_000, "<private>key</private>"]),
                             WRONG_TYPES).map(lambda t: {**t[0], t[1]: t[2]})
    return weighted((8, objects), (1, with_unknown), (1, WRONG_TYPES))
