"""Settings.resolve(): a command-line flag beats a DCPM_* environment variable, which beats the
config file (`config.toml` in the dcpm home), which beats the default. Read at call time."""

from __future__ import annotations

import dataclasses
import os
import tomllib
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from dcpm_cli.errors import InputError

DEFAULT_LLM = "ollama:qwen3:4b"
DEFAULT_EMBEDDER = "minilm"


def dcpm_home() -> Path:
    """The data directory: $DCPM_HOME, else the platform's user data dir (never a temp dir)."""
    env = os.environ.get("DCPM_HOME")
    if env:
        return Path(env).expanduser()
    from platformdirs import user_data_dir

    return Path(user_data_dir("dcpm", appauthor=False))


@dataclass(frozen=True)
class Settings:
    store: str = ""  # LanceDB URI or path; "" means <home>/store
    embedder: str = DEFAULT_EMBEDDER
    llm: str = DEFAULT_LLM
    llm_timeout: float = 120.0  # seconds per LLM call
    llm_retries: int = 2  # extra attempts after an invalid reply
    history_window: int = 6  # earlier turns given to extraction as context
    top_k: int = 5  # neighbours given to reconciliation per item
    supersede_attribute_min_cos: float = 0.6  # attribute similarity that still counts as "same"
    recall_min_similarity: float = 0.2  # cosine below which a memory is not "found" (MiniLM)
    no_supersedes: bool = False  # the paper's ablation: no revision chains written or read

    @classmethod
    def env_name(cls, field: str) -> str:
        return "DCPM_" + field.upper()

    @classmethod
    def resolve(cls, **flags: Any) -> Settings:
        """Merge flags (None = not given) over env, config file and defaults."""
        values: dict[str, Any] = {}
        config = _read_config_file()
        for f in fields(cls):
            if flags.get(f.name) is not None:
                raw = flags[f.name]
            elif cls.env_name(f.name) in os.environ:
                raw = os.environ[cls.env_name(f.name)]
            elif f.name in config:
                raw = config[f.name]
            else:
                continue
            values[f.name] = _coerce(f, raw)
        settings = cls(**values)
        if not settings.store:
            settings = dataclasses.replace(settings, store=str(dcpm_home() / "store"))
        return settings


def _read_config_file() -> dict[str, Any]:
    path = dcpm_home() / "config.toml"
    if not path.exists():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as e:
        raise InputError(f"cannot read {path}: {e}", "fix or remove the config file") from e


def parse_value(raw: Any, kind: str) -> Any:
    """A setting's value from a flag, env var or config file, as its type `kind` (bool, int,
    float, or str); ValueError when it cannot be one ("false" is False, not truthy)."""
    if kind.startswith("bool"):
        if isinstance(raw, bool):
            return raw
        value = str(raw).strip().casefold()
        if value in ("1", "true", "yes", "on"):
            return True
        if value in ("0", "false", "no", "off", ""):
            return False
        raise ValueError(raw)
    if kind.startswith("int"):
        return int(raw)
    if kind.startswith("float"):
        return float(raw)
    return str(raw)


def _coerce(f: dataclasses.Field, raw: Any) -> Any:
    kind = type(f.default).__name__
    try:
        return parse_value(raw, kind)
    except (TypeError, ValueError) as e:
        raise InputError(
            f"setting {f.name!r} must be a {kind}, got {raw!r}",
            f"check --{f.name.replace('_', '-')}, {Settings.env_name(f.name)} or config.toml",
        ) from e
