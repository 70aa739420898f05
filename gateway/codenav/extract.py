"""Source bytes -> symbols and imports, with a tree-sitter grammar.

The symbol query runs in C and returns every definition node; Python only nests them by
byte range and reads names, signatures and doc lines from a few nodes each. Definitions
inside a function body are not listed (they are part of that function's source).
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field

import tree_sitter

from gateway.codenav.languages import Grammar, LanguageSpec, grammar
from gateway.codenav.model import CONTAINER_KINDS, Symbol

SIGNATURE_MAX_CHARS = 200
IMPORT_MAX_CHARS = 120
DOC_MAX_CHARS = 160
LINE_READ_BYTES = 4096
# Children that hold a definition's body when the grammar gives it no `body` field.
BODY_TYPES = frozenset({"block", "class_body", "body_statement", "function_body", "declaration_list",
                        "field_declaration_list", "compound_statement", "enum_body", "interface_body",
                        "statement_block", "template_body", "protocol_body", "enum_class_body", "enumerator_list",
                        "enum_variant_list"})
# Sibling nodes right above a definition that belong to it.
COMMENT_TYPES = frozenset({"comment", "line_comment", "block_comment", "multiline_comment"})
LEADING_TYPES = COMMENT_TYPES | {"decorator", "attribute_item", "attribute_list", "annotation", "marker_annotation"}
FIXED_NAMES = {"init_declaration": "init", "deinit_declaration": "deinit"}
_SPACES = re.compile(r"\s+")
_BRACKET_SPACE = re.compile(r"[(\[] | ?,? [)\]]")  # what folding a multi-line parameter list leaves
_XML_TAG = re.compile(r"</?[A-Za-z][^>]*>")
_COMMENT_MARKERS = ("/**", "/*!", "/*", "///", "//!", "//", "#", "--", "*")
_parsers = threading.local()


@dataclass
class _Draft:
    """A symbol while its children are still being found."""

    node: tree_sitter.Node
    kind: str
    name: str
    qualified_name: str
    children: list[_Draft] = field(default_factory=list)


class _Source:
    """The file's bytes and lines, and the language's comment conventions."""

    def __init__(self, data: bytes, spec: LanguageSpec):
        self.data = data
        self.spec = spec
        self.lines = data.split(b"\n")

    def bounded_text(self, node: tree_sitter.Node) -> str:
        return self.head(node.start_byte, node.end_byte)

    def line(self, row: int) -> str:
        """A line, cut at LINE_READ_BYTES: a minified file's one huge line must not be copied per symbol."""
        return self.lines[row][:LINE_READ_BYTES].decode("utf-8", "replace") if 0 <= row < len(self.lines) else ""

    def starts_line(self, node: tree_sitter.Node) -> bool:
        row, column = node.start_point
        return column < LINE_READ_BYTES and not self.lines[row][:column].strip()

    def head(self, start: int, stop: int) -> str:
        """Source from `start` to `stop` (or to the end of that line), at most LINE_READ_BYTES."""
        end = min(stop, start + LINE_READ_BYTES)
        if stop < 0:
            newline = self.data.find(b"\n", start, end)
            end = newline if newline >= 0 else end
        return self.data[start:end].decode("utf-8", "replace")


def parse_symbols(data: bytes, spec: LanguageSpec) -> tuple[tuple[str, ...], tuple[Symbol, ...]]:
    """The imports (first lines) and the symbol tree of one file."""
    loaded = grammar(spec)
    tree = _parser(loaded).parse(data)
    source = _Source(data, spec)
    return _imports(loaded, tree, source), _symbols(loaded, tree, source)


def _parser(loaded: Grammar) -> tree_sitter.Parser:
    cache: dict[str, tree_sitter.Parser] = _parsers.__dict__.setdefault("by_language", {})
    parser = cache.get(loaded.spec.name)
    if parser is None:
        parser = cache[loaded.spec.name] = tree_sitter.Parser(loaded.language)
    return parser


def _imports(loaded: Grammar, tree: tree_sitter.Tree, source: _Source) -> tuple[str, ...]:
    if loaded.imports is None:
        return ()
    nodes = tree_sitter.QueryCursor(loaded.imports).captures(tree.root_node).get("import", [])
    unique = {node.start_byte: node for node in nodes}
    return tuple(_bounded(_one_line(source.bounded_text(unique[start])), IMPORT_MAX_CHARS) for start in sorted(unique))


def _symbols(loaded: Grammar, tree: tree_sitter.Tree, source: _Source) -> tuple[Symbol, ...]:
    captures = tree_sitter.QueryCursor(loaded.symbols).captures(tree.root_node)
    found: dict[tuple[int, int], tuple[tree_sitter.Node, str]] = {}
    for capture, nodes in captures.items():
        for node in nodes:
            found.setdefault((node.start_byte, -node.end_byte), (node, loaded.kind_of_capture[capture]))
    roots: list[_Draft] = []
    stack: list[_Draft] = []
    for key in sorted(found):
        node, kind = found[key]
        while stack and stack[-1].node.end_byte <= node.start_byte:
            stack.pop()
        parent = stack[-1] if stack else None
        if parent is not None and parent.kind not in CONTAINER_KINDS:
            continue  # inside a function body
        draft = _draft(node, _refine_kind(node, kind, parent), parent, source)
        (parent.children if parent else roots).append(draft)
        stack.append(draft)
    return tuple(_finish(draft, source) for draft in roots)


def _refine_kind(node: tree_sitter.Node, kind: str, parent: _Draft | None) -> str:
    if node.type == "type_spec":
        inner = node.child_by_field_name("type")
        kind = {"struct_type": "struct", "interface_type": "interface"}.get(inner.type if inner else "", kind)
    elif node.type == "class_declaration":
        kind = _class_kind(node, kind)
    if kind == "function" and parent is not None and parent.kind in CONTAINER_KINDS - {"section"}:
        return "method"
    return kind


def _class_kind(node: tree_sitter.Node, kind: str) -> str:
    """Kotlin and Swift spell interfaces, enums, structs and extensions as class declarations."""
    declared = node.child_by_field_name("declaration_kind")
    keywords = {child.type for child in node.children if not child.is_named}
    if declared is not None:
        keywords.add(declared.type)
    for modifiers in (child for child in node.children if child.type == "modifiers"):
        keywords.update((modifier.text or b"").decode() for modifier in modifiers.children
                        if modifier.type == "class_modifier")  # Kotlin: enum class, data class
    for keyword, refined in (("interface", "interface"), ("enum", "enum"), ("struct", "struct"),
                             ("extension", "impl")):
        if keyword in keywords:
            return refined
    return kind


def _draft(node: tree_sitter.Node, kind: str, parent: _Draft | None, source: _Source) -> _Draft:
    name = _name(node, source)
    qualifier = parent.qualified_name if parent else _receiver(node, source)
    if kind in ("function", "method"):
        for separator in ("::", ".", ":"):
            if separator in name:
                own, _, name = name.rpartition(separator)
                qualifier = f"{qualifier}.{own}" if qualifier else own.replace("::", ".")
                break
    return _Draft(node, kind, name, f"{qualifier}.{name}" if qualifier else name)


def _name(node: tree_sitter.Node, source: _Source) -> str:
    if node.type in FIXED_NAMES:
        return FIXED_NAMES[node.type]
    if node.type == "section":
        heading = node.named_children[0] if node.named_children else None
        content = heading.child_by_field_name("heading_content") if heading else None
        return _one_line(source.bounded_text(content)) if content else "(untitled)"
    named = node.child_by_field_name("name")
    if named is None:  # a Rust impl block is named by its type; C and C++ by the innermost declarator
        named = node.child_by_field_name("type") if node.type == "impl_item" else _innermost_declarator(node)
    return _one_line(source.bounded_text(named)) if named is not None else "(anonymous)"


def _innermost_declarator(node: tree_sitter.Node) -> tree_sitter.Node | None:
    """C and C++ put a function's name inside nested declarators (pointer, function...)."""
    declarator = node.child_by_field_name("declarator")
    while declarator is not None and declarator.child_by_field_name("declarator") is not None:
        declarator = declarator.child_by_field_name("declarator")
    return declarator


def _receiver(node: tree_sitter.Node, source: _Source) -> str:
    """A Go method's receiver type, so that `Point.Dist` names it."""
    receiver = node.child_by_field_name("receiver") if node.type == "method_declaration" else None
    if receiver is None or node.child_by_field_name("name") is None:
        return ""
    declaration = receiver.named_children[0] if receiver.named_children else None
    kind = declaration.child_by_field_name("type") if declaration else None
    return re.sub(r"[*\s]|\[.*\]", "", source.bounded_text(kind)) if kind else ""


def _finish(draft: _Draft, source: _Source) -> Symbol:
    node = draft.node
    outer = _outer(node, source.spec.wrappers)
    leading_row = _leading_row(outer, source)
    end_row = node.end_point.row - (1 if node.end_point.column == 0 and node.end_point.row > node.start_point.row
                                    else 0)
    while draft.kind == "section" and end_row > node.start_point.row and not source.lines[end_row].strip():
        end_row -= 1
    signature_node = node if outer.type == "decorated_definition" else outer
    return Symbol(
        name=draft.name, qualified_name=draft.qualified_name, kind=draft.kind,
        start_line=outer.start_point.row + 1, end_line=end_row + 1, unfold_start_line=leading_row + 1,
        signature=_signature(signature_node, source), doc=_doc(node, leading_row, outer.start_point.row, source),
        children=tuple(_finish(child, source) for child in draft.children),
    )


def _outer(node: tree_sitter.Node, wrappers: frozenset[str]) -> tree_sitter.Node:
    """The node to unfold: a wrapper (decorators, export, template) around this one definition."""
    while node.parent is not None and node.parent.type in wrappers and _only_child_of_its_type(node):
        node = node.parent
    return node


def _only_child_of_its_type(node: tree_sitter.Node) -> bool:
    return node.parent is not None and sum(child.type == node.type for child in node.parent.named_children) == 1


def _leading_row(outer: tree_sitter.Node, source: _Source) -> int:
    """The first row of the comments, decorators and attributes right above a definition."""
    row = outer.start_point.row
    previous = outer.prev_named_sibling
    while (previous is not None and previous.type in LEADING_TYPES and row - 1 <= previous.end_point.row <= row
           and source.starts_line(previous)):
        row = min(row, previous.start_point.row)
        previous = previous.prev_named_sibling
    prefixes = source.spec.comment_prefixes
    while prefixes and row > 0 and source.line(row - 1).lstrip().startswith(prefixes):
        row -= 1
    return row


def _signature(node: tree_sitter.Node, source: _Source) -> str:
    # The head ends where the body (or a comment between head and body) begins.
    stops = [child.start_byte for child in node.children
             if child.start_byte > node.start_byte and (child.type in BODY_TYPES or child.type in COMMENT_TYPES)]
    body = node.child_by_field_name("body")
    if body is not None and body.start_byte > node.start_byte:
        stops.append(body.start_byte)
    head = source.head(node.start_byte, min(stops) if stops else -1)
    tight = _BRACKET_SPACE.sub(lambda match: match.group(0).replace(" ", "").lstrip(","), _one_line(head))
    return _bounded(tight.rstrip(" \t{:=;"), SIGNATURE_MAX_CHARS)


def _doc(node: tree_sitter.Node, leading_row: int, start_row: int, source: _Source) -> str:
    docstring = _python_docstring(node, source) if source.spec.name == "python" else ""
    if docstring:
        return docstring
    for row in range(leading_row, start_row):
        line = _clean_comment(source.line(row))
        if line and not line.startswith(("@", "[")):
            return _bounded(line, DOC_MAX_CHARS)
    return ""


def _python_docstring(node: tree_sitter.Node, source: _Source) -> str:
    body = node.child_by_field_name("body")
    first = body.named_children[0] if body is not None and body.named_children else None
    if first is None or first.type != "expression_statement" or first.named_children[0].type != "string":
        return ""
    content = next((c for c in first.named_children[0].named_children if c.type == "string_content"), None)
    lines = [line.strip() for line in source.bounded_text(content).splitlines()] if content else []
    return _bounded(next((line for line in lines if line), ""), DOC_MAX_CHARS)


def _clean_comment(line: str) -> str:
    text = line.strip()
    for marker in _COMMENT_MARKERS:
        if text.startswith(marker):
            text = text[len(marker):]
            break
    if text.endswith("*/"):
        text = text[:-2]
    return _XML_TAG.sub("", text).strip()


def _one_line(text: str) -> str:
    return _SPACES.sub(" ", text).strip()


def _bounded(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"
