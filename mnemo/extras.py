"""Optional features and the pip extra that installs each: a missing one is a one-line error
naming the extra, not a traceback from deep inside an import.

- `server`: the PostgreSQL store backend (psycopg and its pool), for the server runtime;
- `llm`: the one optional Anthropic Messages API call (LLM observer, grounded corpus answers);
- `code`: the tree-sitter runtime and the grammar wheels of the code-navigation tools.

`make venv` installs them all (the dev extra includes them), so the tests run every path.
"""

from __future__ import annotations

import importlib
from types import ModuleType

from mnemo.errors import FailedPrecondition


def require(module: str, extra: str, feature: str) -> ModuleType:
    """Import `module`, which `extra` installs for `feature`; FailedPrecondition naming the extra
    when the extra is not installed. A module that is there but fails to import raises as it is."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as err:
        if not _is_part_of(err.name or "", module):
            raise
        raise FailedPrecondition(f"{feature} needs the '{extra}' extra: pip install 'mnemo[{extra}]'") from None


def _is_part_of(missing: str, module: str) -> bool:
    """True when the missing module is `module` or a package it lives in (psycopg for psycopg.rows)."""
    return bool(missing) and (module == missing or module.startswith(missing + "."))
