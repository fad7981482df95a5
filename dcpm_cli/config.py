"""One resolver for every setting: a command-line flag beats a DCPM_* environment variable,
which beats the config file (`config.toml` in the dcpm home), which beats the default. Read at
call time, never at import.

Two groups share it: `Settings` (top-level keys of config.toml) and `DreamOptions` (the
`[dream]` table). Every value is coerced to its type and checked (`CHECKS`); a bad value, or
a key config.toml does not know, is refused with one clear message (InputError, exit 2).
`explain()` says where each value came from (`dcpm config show`).
"""

from __future__ import annotations

import dataclasses
import os
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, fields
from datetime import tzinfo
from pathlib import Path
from typing import Any

from dcpm_cli.errors import InputError
from dcpm_cli.models import Mode

DEFAULT_LLM = "ollama:qwen3:4b"
DEFAULT_EMBEDDER = "minilm"
# The judgement questions a user may choose (prompts/judge.py: PROMPTS; a test holds them equal).
JUDGE_PROMPTS = (
    "thing",
    "four",
    "four_reasoned",
    "binary",
    "binary_reasoned",
    "both_true",
    "both_true_reasoned",
)


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
    history_gap_minutes: float = 30.0  # a longer pause ends a conversation: no context across it
    judge_k: int = 3  # nearest current facts each new item is compared with, one call each
    # A candidate less similar than this is never compared (MiniLM: the median cosine of two
    # facts from unrelated life domains in the dream's calibration set, 0.10; 95% of facts of
    # one theme are above 0.18). Another embedder needs its own.
    judge_min_similarity: float = 0.1
    # The question asked about each pair (prompts/judge.py): `thing` (replaces or not, asked
    # twice before a link) suits a small model; `four` also answers adds_detail and same.
    judge_prompt: str = "thing"
    # A `replaces` stands only if the later statement (or its input) says a change in words
    # (write/change.py): a small model links a stance said again, a plan or a question. Off for
    # a model that tells a contradiction from a restatement: a change told without such words
    # ("I live in Leeds" after "I live in Bristol") then links too.
    judge_change_words: bool = True
    # An item whose input names what it took the place of ("sold the car": the car) supersedes
    # the nearest current memory that says those words, without a judgement (write/reconcile.py).
    # Off: on qwen2.5-coder:1.5b such links were right 9 of 15 times on unseen sets.
    named_ends: bool = False
    recall_min_similarity: float = 0.2  # cosine below which a memory is not "found" (MiniLM)
    # The user's zone, an IANA name: a time written without an offset is one of it, days are
    # shown in it, and a question's time words ("yesterday", "on Saturday") count its days.
    timezone: str = "UTC"
    # How the user writes a date in numbers when its numbers cannot tell: a WhatsApp export
    # whose dates all read both ways, a question "what did I do on 3/4?": "dmy" (day first) or
    # "mdy"; "" refuses such a file and reads no date in such a question.
    date_order: str = ""
    # The name the user goes by in the chats they add, as their turns begin ("Kasia: …" in a
    # WhatsApp export, which does not say whose phone it is): "what did I tell Maya?" then asks
    # of those turns and the user's own notes. "" reads no chat turn as the user's.
    me: str = ""
    no_supersedes: bool = False  # the paper's ablation: no revision chains written or read
    # false: `dcpm add` and `dcpm mcp` store raw only, as with --no-extract every time (a store
    # kept with no model, a cron job that must never call one); `dcpm process` still extracts.
    extract: bool = True

    @property
    def zone(self) -> tzinfo:
        """The user's time zone (`timezone`, checked when the settings were resolved)."""
        from zoneinfo import ZoneInfo

        return ZoneInfo(self.timezone)

    @classmethod
    def env_name(cls, field: str) -> str:
        return "DCPM_" + field.upper()

    @classmethod
    def resolve(cls, **flags: Any) -> Settings:
        """Merge flags (None = not given) over env, config file and defaults. The [dream]
        values are checked too: a bad one fails every command, not just the nightly cron run."""
        settings = _resolve(cls, None, flags)[0]
        DreamOptions.resolve()
        return settings


@dataclass(frozen=True)
class DreamOptions:
    """`dcpm dream`'s options (see dream/run.py for what each does)."""

    mode: str = "full"
    core_schemas: bool = False
    no_supersedes: bool = False
    catch_up: bool = True
    relink: bool = True
    retry_declined: bool = False
    dry_run: bool = False
    max_calls: int | None = None
    max_seconds: float | None = None
    eps1: float | None = None
    eps2: float | None = None
    min_samples: int = 3
    max_cluster: int = 40
    theta_beh: float | None = None
    theta_sem: float | None = None
    max_group: int = 6
    dedupe_cos: float = 0.92
    context_k: int = 5
    retries: int = 2

    @staticmethod
    def env_name(name: str) -> str:
        if name in ("core_schemas", "no_supersedes"):
            return "DCPM_" + name.upper()
        return "DCPM_DREAM_" + name.upper()

    @classmethod
    def resolve(cls, **flags: Any) -> DreamOptions:
        """Flags (None = not given) over DCPM_* variables, the config file's [dream] table,
        and the defaults."""
        return _resolve(cls, "dream", flags)[0]

    @property
    def sweeps(self) -> bool:
        """Phase 3 runs only in full mode and with the explicit opt-in."""
        return self.mode == "full" and self.core_schemas


SECTIONS: dict[str | None, type] = {None: Settings, "dream": DreamOptions}


def _between(lo: float, hi: float) -> tuple[Callable[[Any], bool], str]:
    return (lambda v: lo <= v <= hi), f"between {lo:g} and {hi:g}"


def _at_least(lo: float) -> tuple[Callable[[Any], bool], str]:
    return (lambda v: v >= lo), f"at least {lo:g}"


def _is_zone(name: str) -> bool:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        return False
    return True


def _is_speaker_name(name: str) -> bool:
    """Whether `name` is one a chat turn can begin with ("Kasia", "Mary Ann de la Cruz")."""
    from dcpm_cli.models import speaker_of

    return not name or speaker_of(f"{name}: x") == name


_POSITIVE = ((lambda v: v > 0), "greater than 0")
_COSINE = _between(-1, 1)
_RADIUS = ((lambda v: 0 < v < 2), "between 0 and 2 (a cosine distance)")

# config key → (test, what a valid value is). None values (not set) are never checked.
CHECKS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "store": ((lambda v: bool(v.strip())), "a path or a LanceDB URI"),
    "embedder": ((lambda v: bool(v.strip())), "a name such as minilm"),
    "llm": ((lambda v: bool(v.strip())), "a name such as ollama:qwen3:4b"),
    "llm_timeout": _POSITIVE,
    "llm_retries": _between(0, 20),
    "history_window": _between(0, 1000),
    "history_gap_minutes": _at_least(0),
    "judge_k": _between(1, 10),
    "judge_min_similarity": _COSINE,
    "judge_prompt": ((lambda v: v in JUDGE_PROMPTS), "one of " + ", ".join(JUDGE_PROMPTS)),
    "recall_min_similarity": _COSINE,
    "timezone": (_is_zone, "an IANA time zone such as Europe/Berlin or UTC"),
    "date_order": ((lambda v: v in ("", "dmy", "mdy")), "dmy (day first) or mdy (month first)"),
    "me": (_is_speaker_name, "a name as your chat turns begin, such as Kasia or Kasia Nowak"),
    "dream.mode": ((lambda v: v in tuple(Mode)), "one of " + ", ".join(Mode)),
    "dream.max_calls": _at_least(0),
    "dream.max_seconds": _at_least(0),
    "dream.eps1": _RADIUS,
    "dream.eps2": _RADIUS,
    "dream.min_samples": _between(1, 1000),
    "dream.max_cluster": _at_least(3),
    "dream.theta_beh": _COSINE,
    "dream.theta_sem": _COSINE,
    "dream.max_group": _between(2, 1000),
    "dream.dedupe_cos": _COSINE,
    "dream.context_k": _between(0, 100),
    "dream.retries": _between(0, 20),
}


@dataclass(frozen=True)
class Resolved:
    """One setting as resolved: its value and where it came from."""

    key: str  # as in config.toml: "judge_k", "dream.eps1"
    value: Any
    source: str  # flag | env | file | default
    env: str
    note: str = ""  # e.g. how a relative path in config.toml was read


def explain(**flags: Any) -> list[Resolved]:
    """Every setting of every group, resolved, with its source (flags: the general ones)."""
    out: list[Resolved] = []
    for section in SECTIONS:
        out += _resolve(SECTIONS[section], section, flags if section is None else {})[1]
    return out


def _resolve(cls: Any, section: str | None, flags: dict[str, Any]) -> tuple[Any, list[Resolved]]:
    config = read_config()
    table = config.get(section, {}) if section else config
    values: dict[str, Any] = {}
    sources: list[Resolved] = []
    for f in fields(cls):
        key, env = (f"{section}.{f.name}" if section else f.name), cls.env_name(f.name)
        if flags.get(f.name) is not None:
            raw, source = flags[f.name], "flag"
        elif env in os.environ:
            raw, source = os.environ[env], "env"
        elif f.name in table:
            raw, source = table[f.name], "file"
        else:
            sources.append(Resolved(key, f.default, "default", env))
            continue
        values[f.name] = _checked(key, _coerce(f, raw, key, env, source), env, source)
        note = ""
        if cls is Settings and f.name == "store" and source == "file":
            values[f.name], note = _store_from_file(values[f.name])
        sources.append(Resolved(key, values[f.name], source, env, note))
    obj = cls(**values)
    if cls is Settings and not obj.store:
        obj = dataclasses.replace(obj, store=str(dcpm_home() / "store"))
        sources = [dataclasses.replace(r, value=obj.store) if r.key == "store" else r for r in sources]
    return obj, sources


def _store_from_file(store: str) -> tuple[str, str]:
    """A relative `store` in config.toml is read against the file's folder, not the current
    directory: `dcpm add` in one folder and `dcpm recall` in another see the same memory."""
    path = Path(store).expanduser()
    if "://" in store or path.is_absolute():
        return store, ""
    folder = dcpm_home()
    return str(folder / path), f"relative to the folder of config.toml ({folder})"


def read_config() -> dict[str, Any]:
    """config.toml, checked: every key must be a known setting."""
    path = dcpm_home() / "config.toml"
    if not path.exists():
        return {}
    try:
        config = tomllib.loads(path.read_text(encoding="utf-8-sig"))  # Notepad writes a BOM
    except (tomllib.TOMLDecodeError, UnicodeDecodeError, OSError) as e:  # OSError: e.g. a directory
        raise InputError(f"cannot read {path}: {e}", "fix or remove the config file") from e
    for section, cls in SECTIONS.items():
        table = config.get(section, {}) if section else config
        if section and not isinstance(table, dict):
            raise InputError(
                f"{path}: {section} must be a table", f"a line [{section}], then key = value lines"
            )
        known = {f.name for f in fields(cls)} | ({s for s in SECTIONS if s} if section is None else set())
        unknown = sorted(set(table) - known)
        if unknown:
            where = f"the {section} table of {path}" if section else str(path)
            raise InputError(
                f"unknown setting {', '.join(map(repr, unknown))} in {where}",
                "known: " + ", ".join(sorted(known)),
            )
    return config


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
        if isinstance(raw, float) and not raw.is_integer():
            raise ValueError(raw)
        return int(raw)
    if kind.startswith("float"):
        return float(raw)
    return str(raw)


_A = {"bool": "true or false", "int": "an integer", "float": "a number"}
_FROM = {"flag": "the command line", "env": "the environment", "file": "config.toml"}


def _coerce(f: dataclasses.Field, raw: Any, key: str, env: str, source: str) -> Any:
    kind = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", "str")
    if kind == "str" and not isinstance(raw, str):  # `store = 5` in config.toml: not a name
        raise InputError(
            f"setting {key!r} must be a string, got {raw!r} (from {_FROM[source]})", _hint(key, env, source)
        )
    try:
        if source == "file" and not _typed(raw, kind):
            raise TypeError(raw)  # TOML has types: `judge_k = "3"` or `= true` is no integer
        return parse_value(raw, kind)
    except (TypeError, ValueError) as e:
        raise InputError(
            f"setting {key!r} must be {_A.get(kind.split(' ')[0], 'a string')}, got {raw!r} "
            f"(from {_FROM[source]})",
            _hint(key, env, source),
        ) from e


def _typed(raw: Any, kind: str) -> bool:
    """Whether a config.toml value already has the setting's type (a flag or a variable is text,
    and parsed; a file's value is not guessed at)."""
    if kind.startswith("bool"):
        return isinstance(raw, bool)
    if kind.startswith("int"):
        return isinstance(raw, int) and not isinstance(raw, bool)
    if kind.startswith("float"):
        return isinstance(raw, int | float) and not isinstance(raw, bool)
    return True


def _checked(key: str, value: Any, env: str, source: str) -> Any:
    test, valid = CHECKS.get(key, (lambda v: True, ""))
    if value is not None and not test(value):
        message = f"setting {key!r} must be {valid}, got {value!r} (from {_FROM[source]})"
        raise InputError(message, _hint(key, env, source))
    return value


def _hint(key: str, env: str, source: str) -> str:
    """Where to mend a bad value: where it came from. A flag is named only when the value came
    from one, since most settings (`judge_k`, `history_gap_minutes`, ...) have none."""
    if source == "flag":
        return "check --" + key.rsplit(".", 1)[-1].replace("_", "-")
    if source == "env":
        return f"check {env} (it overrides {key} in config.toml)"
    return f"check {key} in config.toml"
