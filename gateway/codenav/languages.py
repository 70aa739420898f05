"""Which grammar reads which file, and what its symbols, imports and comments look like.

Each language is a table, not code: tree-sitter query patterns captured by symbol kind
(the query runs in C, so a 5,000-line file is walked in milliseconds), patterns for
import statements, and the prefixes of comment and decorator lines that belong to the
definition below them. Grammars come from one compiled wheel per language (PyPI
`tree-sitter-<lang>`), loaded on first use; nothing is downloaded at run time.
"""

from __future__ import annotations

import importlib
import os
import threading
from dataclasses import dataclass, field
from pathlib import PurePath

import tree_sitter

C_COMMENTS = ("//", "/*", "*")
JVM_COMMENTS = (*C_COMMENTS, "@")


@dataclass(frozen=True)
class LanguageSpec:
    """How to find the structure of one language's files."""

    name: str
    module: str  # the grammar package, e.g. tree_sitter_python
    factory: str  # its function returning the compiled language
    symbols: tuple[tuple[str, str], ...]  # (query pattern, kind)
    imports: tuple[str, ...] = ()  # query patterns, each capturing @import
    comment_prefixes: tuple[str, ...] = C_COMMENTS
    # Nodes that wrap one definition and belong to its source (decorators, `export`, templates).
    wrappers: frozenset[str] = field(default_factory=frozenset)


PYTHON = LanguageSpec(
    "python", "tree_sitter_python", "language",
    symbols=(("(class_definition)", "class"), ("(function_definition)", "function")),
    imports=("(import_statement) @import", "(import_from_statement) @import", "(future_import_statement) @import"),
    comment_prefixes=("#", "@"),
    wrappers=frozenset({"decorated_definition"}),
)

_JS_SYMBOLS = (
    ("(class_declaration)", "class"),
    ("(function_declaration)", "function"),
    ("(generator_function_declaration)", "function"),
    ("(method_definition)", "function"),
    ("(variable_declarator value: [(arrow_function) (function_expression)])", "function"),
)
_JS_DECLARATIONS = ("lexical_declaration", "variable_declaration")
_JS_IMPORTS = (
    "(import_statement) @import",
    '((call_expression function: (identifier) @_f) @import (#eq? @_f "require"))',
)
JAVASCRIPT = LanguageSpec(
    "javascript", "tree_sitter_javascript", "language", symbols=_JS_SYMBOLS, imports=_JS_IMPORTS,
    comment_prefixes=JVM_COMMENTS, wrappers=frozenset({"export_statement", *_JS_DECLARATIONS}),
)
_TS_SYMBOLS = (
    *_JS_SYMBOLS,
    ("(abstract_class_declaration)", "class"),
    ("(interface_declaration)", "interface"),
    ("(type_alias_declaration)", "type"),
    ("(enum_declaration)", "enum"),
    ("(internal_module)", "namespace"),
    ("(method_signature)", "function"),
    ("(abstract_method_signature)", "function"),
    ("(function_signature)", "function"),
)
TYPESCRIPT = LanguageSpec(
    "typescript", "tree_sitter_typescript", "language_typescript", symbols=_TS_SYMBOLS, imports=_JS_IMPORTS,
    comment_prefixes=JVM_COMMENTS, wrappers=frozenset({"export_statement", "ambient_declaration", *_JS_DECLARATIONS}),
)
TSX = LanguageSpec(
    "tsx", "tree_sitter_typescript", "language_tsx", symbols=_TS_SYMBOLS, imports=_JS_IMPORTS,
    comment_prefixes=JVM_COMMENTS, wrappers=frozenset({"export_statement", "ambient_declaration", *_JS_DECLARATIONS}),
)
GO = LanguageSpec(
    "go", "tree_sitter_go", "language",
    symbols=(("(function_declaration)", "function"), ("(method_declaration)", "method"), ("(type_spec)", "type"),
             ("(type_alias)", "type")),
    imports=("(import_spec) @import",),
    wrappers=frozenset({"type_declaration"}),
)
RUST = LanguageSpec(
    "rust", "tree_sitter_rust", "language",
    symbols=(("(function_item)", "function"), ("(function_signature_item)", "function"), ("(struct_item)", "struct"),
             ("(enum_item)", "enum"), ("(union_item)", "struct"), ("(trait_item)", "trait"), ("(impl_item)", "impl"),
             ("(mod_item)", "module"), ("(type_item)", "type"), ("(macro_definition)", "function")),
    imports=("(use_declaration) @import", "(extern_crate_declaration) @import"),
    comment_prefixes=("//", "/*", "*", "#["),
)
JAVA = LanguageSpec(
    "java", "tree_sitter_java", "language",
    symbols=(("(class_declaration)", "class"), ("(interface_declaration)", "interface"),
             ("(enum_declaration)", "enum"), ("(record_declaration)", "class"),
             ("(annotation_type_declaration)", "interface"), ("(method_declaration)", "function"),
             ("(constructor_declaration)", "function")),
    imports=("(import_declaration) @import",),
    comment_prefixes=JVM_COMMENTS,
)
_C_SYMBOLS = (
    ("(function_definition)", "function"),
    ("(struct_specifier body: (_))", "struct"),
    ("(union_specifier body: (_))", "struct"),
    ("(enum_specifier body: (_))", "enum"),
    ("(type_definition)", "type"),
)
C = LanguageSpec("c", "tree_sitter_c", "language", symbols=_C_SYMBOLS, imports=("(preproc_include) @import",))
CPP = LanguageSpec(
    "cpp", "tree_sitter_cpp", "language",
    symbols=(*_C_SYMBOLS, ("(class_specifier body: (_))", "class"), ("(namespace_definition)", "namespace"),
             ("(field_declaration declarator: (function_declarator))", "function"),
             ("(alias_declaration)", "type")),
    imports=("(preproc_include) @import", "(using_declaration) @import"),
    comment_prefixes=(*C_COMMENTS, "[["),
    wrappers=frozenset({"template_declaration"}),
)
CSHARP = LanguageSpec(
    "csharp", "tree_sitter_c_sharp", "language",
    symbols=(("(class_declaration)", "class"), ("(struct_declaration)", "struct"),
             ("(interface_declaration)", "interface"), ("(enum_declaration)", "enum"),
             ("(record_declaration)", "class"), ("(namespace_declaration)", "namespace"),
             ("(file_scoped_namespace_declaration)", "namespace"), ("(method_declaration)", "function"),
             ("(constructor_declaration)", "function"), ("(delegate_declaration)", "type")),
    imports=("(using_directive) @import",),
    comment_prefixes=(*C_COMMENTS, "["),
)
RUBY = LanguageSpec(
    "ruby", "tree_sitter_ruby", "language",
    symbols=(("(class)", "class"), ("(module)", "module"), ("(method)", "function"),
             ("(singleton_method)", "function")),
    imports=('((call method: (identifier) @_m) @import (#match? @_m "^(require|require_relative|load)$"))',),
    comment_prefixes=("#",),
)
PHP = LanguageSpec(
    "php", "tree_sitter_php", "language_php",
    symbols=(("(class_declaration)", "class"), ("(interface_declaration)", "interface"),
             ("(trait_declaration)", "trait"), ("(enum_declaration)", "enum"),
             ("(function_definition)", "function"), ("(method_declaration)", "function")),
    imports=("(namespace_use_declaration) @import",),
    comment_prefixes=(*C_COMMENTS, "#"),
)
KOTLIN = LanguageSpec(
    "kotlin", "tree_sitter_kotlin", "language",
    symbols=(("(class_declaration)", "class"), ("(object_declaration)", "object"),
             ("(function_declaration)", "function"), ("(type_alias)", "type")),
    imports=("(import) @import",),
    comment_prefixes=JVM_COMMENTS,
)
SWIFT = LanguageSpec(
    "swift", "tree_sitter_swift", "language",
    symbols=(("(class_declaration)", "class"), ("(protocol_declaration)", "interface"),
             ("(function_declaration)", "function"), ("(protocol_function_declaration)", "function"),
             ("(init_declaration)", "function"), ("(typealias_declaration)", "type")),
    imports=("(import_declaration) @import",),
    comment_prefixes=JVM_COMMENTS,
)
SCALA = LanguageSpec(
    "scala", "tree_sitter_scala", "language",
    symbols=(("(class_definition)", "class"), ("(object_definition)", "object"), ("(trait_definition)", "trait"),
             ("(enum_definition)", "enum"), ("(function_definition)", "function"),
             ("(function_declaration)", "function"), ("(type_definition)", "type")),
    imports=("(import_declaration) @import",),
    comment_prefixes=JVM_COMMENTS,
)
LUA = LanguageSpec(
    "lua", "tree_sitter_lua", "language",
    symbols=(("(function_declaration)", "function"),),
    imports=('((function_call name: (identifier) @_f) @import (#eq? @_f "require"))',),
    comment_prefixes=("--",),
)
BASH = LanguageSpec(
    "bash", "tree_sitter_bash", "language",
    symbols=(("(function_definition)", "function"),),
    imports=('((command name: (command_name) @_c) @import (#match? @_c "^(source|[.])$"))',),
    comment_prefixes=("#",),
)
MARKDOWN = LanguageSpec(
    "markdown", "tree_sitter_markdown", "language", symbols=(("(section)", "section"),), comment_prefixes=(),
)

LANGUAGES: tuple[LanguageSpec, ...] = (PYTHON, JAVASCRIPT, TYPESCRIPT, TSX, GO, RUST, JAVA, C, CPP, CSHARP, RUBY,
                                       PHP, KOTLIN, SWIFT, SCALA, LUA, BASH, MARKDOWN)

EXTENSIONS: dict[str, LanguageSpec] = {
    **dict.fromkeys((".py", ".pyi", ".pyw"), PYTHON),
    **dict.fromkeys((".js", ".mjs", ".cjs", ".jsx"), JAVASCRIPT),
    **dict.fromkeys((".ts", ".mts", ".cts"), TYPESCRIPT),
    ".tsx": TSX,
    ".go": GO,
    ".rs": RUST,
    ".java": JAVA,
    ".c": C,
    ".h": C,
    **dict.fromkeys((".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".h++"), CPP),
    ".cs": CSHARP,
    **dict.fromkeys((".rb", ".rake", ".gemspec"), RUBY),
    ".php": PHP,
    **dict.fromkeys((".kt", ".kts"), KOTLIN),
    ".swift": SWIFT,
    **dict.fromkeys((".scala", ".sc"), SCALA),
    ".lua": LUA,
    **dict.fromkeys((".sh", ".bash", ".zsh"), BASH),
    **dict.fromkeys((".md", ".markdown", ".mdx"), MARKDOWN),
}
# File names without a telling extension.
FILE_NAMES: dict[str, LanguageSpec] = {"Rakefile": RUBY, "Gemfile": RUBY, ".bashrc": BASH, ".zshrc": BASH}


def language_for(path: PurePath | str) -> LanguageSpec | None:
    """The language of a file by its name, or None (the caller then uses the line-based outline).
    String operations only: a search calls this for every file of the tree."""
    name = os.path.basename(path)
    dot = name.rfind(".")
    return FILE_NAMES.get(name) or (EXTENSIONS.get(name[dot:].lower()) if dot > 0 else None)


@dataclass(frozen=True)
class Grammar:
    """A loaded grammar: its parser and compiled queries (built once per process)."""

    spec: LanguageSpec
    language: tree_sitter.Language
    symbols: tree_sitter.Query
    imports: tree_sitter.Query | None
    kind_of_capture: dict[str, str]


_grammars: dict[str, Grammar] = {}
_lock = threading.Lock()


def grammar(spec: LanguageSpec) -> Grammar:
    """The grammar of a language, loaded and its queries compiled on first use."""
    with _lock:
        loaded = _grammars.get(spec.name)
        if loaded is None:
            loaded = _grammars[spec.name] = _load(spec)
        return loaded


def _load(spec: LanguageSpec) -> Grammar:
    language = tree_sitter.Language(getattr(importlib.import_module(spec.module), spec.factory)())
    # One capture name per pattern (s0, s1...) so that each capture maps back to its kind.
    kind_of_capture = {f"s{index}": kind for index, (_, kind) in enumerate(spec.symbols)}
    source = "\n".join(f"{pattern} @s{index}" for index, (pattern, _) in enumerate(spec.symbols))
    imports = tree_sitter.Query(language, "\n".join(spec.imports)) if spec.imports else None
    return Grammar(spec, language, tree_sitter.Query(language, source), imports, kind_of_capture)
