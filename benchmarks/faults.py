"""Fault injection: does dcpm keep every input it acknowledged, and is the store sound (or made
sound by one `dcpm check --repair`) after kill -9, LLM faults and concurrent writers?

    python -m benchmarks.faults [--kills 12] [--dream-kills 8] [--forget-kills 8]
                                [--import-kills 6] [--llm-rounds 12] [--writers 3]
                                [--inputs 100] [--seed 7] [--no-hostile]

Scenarios (the fake Ollama server of tests/support/fake_ollama.py answers every LLM call, in a thread of
this process; the real `dcpm` runs as subprocesses, the real embedder, the real LanceDB):

- kill -9 of `dcpm add` (with extraction) and of `dcpm add --no-extract`: each trial runs one
  `add` of a JSONL batch and SIGKILLs it at a seeded random moment. After each trial: every input
  whose `add` exited 0 (or 3: stored, extraction pending) is stored, and `dcpm check`
  holds, or holds after one `--repair`. A killed batch is the next trial's batch (the rerun);
  at the end one more run (and `dcpm process`) must complete all the work.
- kill -9 of `dcpm dream`: fresh inputs each trial (pending extraction, so the dream catches up
  first), the dream killed at random; the same checks; a last dream must end `ok`.
- kill -9 of `dcpm forget`, before each of its Lance commits and at random: afterwards no byte
  of the store holds the forgotten words.
- kill -9 of `dcpm import EXPORT` into a store holding data and into an empty one, before each
  Lance commit and at random: `check` holds (one `--repair`), nothing held before is lost, and
  importing again completes the import.
- LLM faults at extraction and at reconcile: server down (no server at extraction; a
  connection dropped mid-request at reconcile), a timeout, HTTP 500, invalid JSON, JSON that
  violates the reply schema, a reply cut off at the token limit (`done_reason: "length"`).
  Every input must be stored, pending (or failed) with its error, and `dcpm process` must
  complete them once the server behaves.
- concurrency: several `dcpm add` processes of distinct inputs with extraction, and a
  `dcpm dream`, all at once: every input stored, `dcpm check` clean without a repair.

The table: per fault kind, trials, inputs acknowledged (stored and reported so), inputs lost,
trials after which `check` failed, and after which it still failed after one `--repair`.
Then a table of hostile exports (cut short, malformed records, broken chains, bad bytes, …):
each must be refused with exit 2 in one line, no traceback, the store byte-identical.
Needs a source checkout (tests/support/fake_ollama.py); `tests/slow/test_faults.py` runs the same scenarios
with small counts.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import zlib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import ModuleType
from typing import Any

import dcpm_cli
from dcpm_cli.prompts.judge import scripted_reply

ROOT = Path(dcpm_cli.__file__).resolve().parents[1]
FAULTS = ("down", "timeout", "http500", "invalid_json", "schema", "length")
PHASES = ("extraction", "reconcile")
MODEL = "tiny"
# A kill lands at a uniform moment between these fractions of a typical run's duration (the
# first ~40% of a run is interpreter and library start-up, before the store is touched).
KILL_FROM, KILL_TO = 0.4, 1.3
LLM_TIMEOUT = 1.0  # seconds per call in fault trials: the timeout fault waits longer than this

# Inputs on a few themes, so that extracted facts cluster and dreams have work.
THEMES = {
    "fitness": "Went running along the river before work",
    "work": "Stayed late at the office to finish the quarterly report",
    "sleep": "Could not fall asleep and lay awake until 3am",
    "food": "Cooked a vegetarian dinner for friends",
    "hobbies": "Practised the piano for an hour in the evening",
}


# -- the tally --------------------------------------------------------------------------------


@dataclass
class Tally:
    """One row of the table."""

    kind: str
    trials: int = 0
    killed: int = 0  # kill trials whose process was still running when SIGKILLed
    acknowledged: int = 0  # inputs a run reported stored (kill trials: whose `add` exited 0)
    lost: int = 0  # acknowledged inputs not in the store afterwards
    broken_before: int = 0  # trials after which `check` failed
    broken_after: int = 0  # ... and still failed after one `check --repair`
    incomplete: int = 0  # reruns that did not complete the work
    leaked: int = 0  # forgotten words found in a byte of the store afterwards
    reruns: int = 0  # forgets cut short before any change, so run again by the user
    problems: list[str] = field(default_factory=list)  # what check found, what failed

    def note(self, what: str) -> None:
        if len(self.problems) < 50:
            self.problems.append(what)

    @property
    def clean(self) -> bool:
        return self.lost == 0 and self.broken_after == 0 and self.incomplete == 0 and self.leaked == 0


# -- the fake Ollama server -------------------------------------------------------------------


def fake_ollama_module() -> ModuleType:
    """tests/support/fake_ollama.py (the module the tests use, when they run us)."""
    for name in ("support.fake_ollama", "fake_ollama"):
        if name in sys.modules:
            return sys.modules[name]
    path = ROOT / "tests" / "support" / "fake_ollama.py"
    if not path.exists():
        raise SystemExit(f"the fault bench needs a source checkout: {path} not found")
    spec = importlib.util.spec_from_file_location("fake_ollama", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["fake_ollama"] = module
    spec.loader.exec_module(module)
    return module


# The four-way judgement: its adds_detail is an UPDATE (a row rewritten in place), so kills and
# faults meet every write the writer makes, not only the default prompt's ADD and SUPERSEDE.
JUDGE_PROMPT = "four"


class Responder:
    """Answers every chat request like a model that follows the schemas, unless a fault is set
    for the request's phase (told apart by the reply schema the client sends)."""

    def __init__(self, fo: ModuleType) -> None:
        self.fo = fo
        self.fault: tuple[str, str] | None = None  # (phase, kind)
        self.calls: dict[str, int] = {}  # chat requests by phase
        self.faulted = 0  # requests answered with the fault

    def __call__(self, body: dict[str, Any]) -> Any:
        fmt = body.get("format")
        props = fmt.get("properties", {}) if isinstance(fmt, dict) else {}
        phase = next((p for key, p in _PHASE_OF.items() if key in props), "other")
        self.calls[phase] = self.calls.get(phase, 0) + 1
        users = [m.get("content", "") for m in body.get("messages", []) if m.get("role") == "user"]
        user = users[-1] if users else ""
        if self.fault is not None and self.fault[0] == phase:
            self.faulted += 1
            return self.faulty(self.fault[1], phase, str(body.get("model", MODEL)))
        if phase == "extraction":
            return {"items": [_fact(user)]}
        if phase == "reconcile":
            return _judgement(user)
        if phase == "induction":
            return {"actions": _actions(user)}
        return {}

    def faulty(self, kind: str, phase: str, model: str) -> Any:
        fo = self.fo
        if kind == "down":  # at extraction the harness points at no server at all
            return fo.Drop()
        if kind == "timeout":
            return fo.Delay(LLM_TIMEOUT * 3, then={"items": [], **scripted_reply("unrelated")})
        if kind == "http500":
            return fo.Error(500, "model runner has unexpectedly stopped")
        if kind == "invalid_json":
            return fo.Reply('{"items": [{"kind": "fact", "text": oops')
        if kind == "schema":
            if phase == "extraction":
                return {"items": [{"kind": "opinion", "text": "", "salience": "high"}]}
            return scripted_reply("unrelated") | {"relation": "MAYBE", "same_thing": "MAYBE"}
        if kind == "length":
            body = {
                "model": model,
                "created_at": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
                "message": {"role": "assistant", "content": '{"items": [{"kind": "fact", "text": "The user'},
                "done": True,
                "done_reason": "length",
                "prompt_eval_count": 900,
                "eval_count": 64,
            }
            return fo.RawBody(json.dumps(body).encode())
        raise ValueError(f"unknown fault {kind!r}")


_PHASE_OF = {
    "items": "extraction",
    "relation": "reconcile",
    "same_thing": "reconcile",
    "actions": "induction",
}


def _fact(prompt: str) -> dict[str, Any]:
    """One fact about the input: its text (after the prompt's last header line)."""
    said = prompt.rsplit(":\n", 1)[-1].strip() or prompt[-200:]
    topic = next((t for t, s in THEMES.items() if s.casefold() in said.casefold()), "journal")
    return {
        "kind": "fact",
        "text": f"Noted: {said[:300]}",
        "topic": topic,
        "subject": "user",
        "attribute": f"{topic} habit",
        "salience": 0.5,
        "when": None,
    }


def _judgement(prompt: str) -> dict[str, Any]:
    """Like a model that reads the two texts: statements on different themes are unrelated; on
    the same theme, `replaces`, `adds_detail` or `unrelated` by turns (so chains and updates are
    written, and a kill can cut them short)."""
    earlier, _, later = prompt.partition("\nLATER")

    def theme(text: str) -> str | None:
        return next((t for t, s in THEMES.items() if s.casefold() in text.casefold()), None)

    if theme(earlier) is None or theme(earlier) != theme(later):
        return scripted_reply("unrelated")
    roll = zlib.crc32(later.encode()) % 3
    return scripted_reply("replaces" if roll == 0 else "adds_detail" if roll == 1 else "unrelated")


def _actions(prompt: str) -> list[dict[str, Any]]:
    m = re.search(r"^F1 \[[^,\]]*, ([^\]]+)\]", prompt, re.M)
    topic = m.group(1) if m else "journal"
    return [
        {
            "action": "create_schema",
            "text": f"Keeps returning to {topic} in what they say",
            "domain": topic,
        }
    ]


@contextmanager
def fake_ollama() -> Iterator[tuple[Any, Responder]]:
    fo = fake_ollama_module()
    server = fo.FakeOllama(models=(MODEL,)).start()
    responder = Responder(fo)
    server.responder = responder
    try:
        yield server, responder
    finally:
        server.close()


def closed_host() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"127.0.0.1:{s.getsockname()[1]}"


# -- inputs -----------------------------------------------------------------------------------


def batch(tag: str, n: int, start: datetime) -> list[str]:
    """n JSONL chat lines, distinct, on the themes, in one session per batch."""
    names = list(THEMES)
    lines = []
    for i in range(n):
        theme = THEMES[names[i % len(names)]]
        when = start + timedelta(hours=i)
        lines.append(
            json.dumps(
                {
                    "role": "user",
                    "content": f"{theme}, day {i} of {tag}",
                    "timestamp": when.isoformat(),
                    "session": tag,
                }
            )
        )
    return lines


def raw_ids(lines: list[str]) -> set[str]:
    """The ids `dcpm add` gives these lines (content-derived)."""
    from dcpm_cli.ingest import formats as ingest

    return {r.id for r in ingest.parse("\n".join(lines), ingest.Format.jsonl, source="faults")}


def raw_inputs(lines: list[str]) -> list[Any]:
    from dcpm_cli.ingest import formats as ingest

    return ingest.parse("\n".join(lines), ingest.Format.jsonl, source="faults")


# -- running dcpm -----------------------------------------------------------------------------


@dataclass
class Lab:
    """One store, the fake server, and how to run `dcpm` against them."""

    home: Path
    server: Any
    responder: Responder
    embedder: Any

    @property
    def store_path(self) -> Path:
        return self.home / "store"

    def env(self, **extra: str) -> dict[str, str]:
        path = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH", "")) if p)
        return {
            **os.environ,
            "DCPM_HOME": str(self.home),
            "DCPM_LLM": f"ollama:{MODEL}",
            "DCPM_LLM_TIMEOUT": "30",
            "DCPM_JUDGE_PROMPT": JUDGE_PROMPT,
            "OLLAMA_HOST": self.server.host,
            "PYTHONPATH": path,
            "COLUMNS": "100",
            **extra,
        }

    def start(self, *args: str) -> subprocess.Popen[bytes]:
        log = tempfile.TemporaryFile()  # noqa: SIM115 (closed by `finish`)
        proc = subprocess.Popen(
            [sys.executable, "-m", "dcpm_cli", *args], env=self.env(), stdout=log, stderr=log
        )
        proc.log = log  # type: ignore[attr-defined]
        return proc

    def run(self, *args: str, timeout: float = 600) -> tuple[int, str]:
        proc = self.start(*args)
        return finish(proc, timeout)

    def store(self) -> Any:
        from dcpm_cli.store import Store

        return Store(str(self.store_path), self.embedder, create=True)

    def writer(self, llm: Any, **settings: Any) -> Any:
        from dcpm_cli.config import Settings
        from dcpm_cli.write.pipeline import Writer

        s = Settings(
            store=str(self.store_path),
            llm=f"ollama:{MODEL}",
            llm_timeout=LLM_TIMEOUT,
            judge_prompt=JUDGE_PROMPT,
            **settings,
        )
        return Writer(self.store(), self.embedder, llm, s)

    def llm(self, host: str | None = None) -> Any:
        from dcpm_cli.llm import OllamaLLM

        return OllamaLLM(MODEL, host=host or self.server.host, timeout=LLM_TIMEOUT)


def finish(proc: subprocess.Popen[bytes], timeout: float = 600) -> tuple[int, str]:
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    log = proc.log  # type: ignore[attr-defined]
    log.seek(0)
    out = log.read().decode("utf-8", "replace")
    log.close()
    return proc.returncode, out


def killed(proc: subprocess.Popen[bytes], after: float) -> bool:
    """SIGKILL the process `after` seconds from now, unless it ended first; True if killed."""
    try:
        proc.wait(after)
        return False
    except subprocess.TimeoutExpired:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        return True


# -- the invariants ---------------------------------------------------------------------------


def check_store(store: Any, *, repair: bool = False) -> tuple[bool, list[str]]:
    """`dcpm check`'s core (with `--repair`): whether every invariant holds, and what does not."""
    from dcpm_cli.ops.check import check

    report = check(store, repair=repair)
    return report.ok, [f"{f.name}: {f.detail}" for f in report.findings if not f.ok]


def assess(lab: Lab, tally: Tally, acknowledged: set[str], what: str) -> None:
    """After a trial: every acknowledged input stored; check, and one repair if it fails."""
    store = lab.store()
    present = set(store.get_raw(sorted(acknowledged)))
    missing = acknowledged - present
    if missing:
        tally.lost += len(missing)
        tally.note(f"{what}: {len(missing)} acknowledged inputs missing, e.g. {sorted(missing)[:3]}")
    ok, problems = check_store(store)
    if ok:
        return
    tally.broken_before += 1
    tally.note(f"{what}: check found {'; '.join(problems)}")
    ok, problems = check_store(lab.store(), repair=True)
    if not ok:
        tally.broken_after += 1
        tally.note(f"{what}: still broken after --repair: {'; '.join(problems)}")


def pending_ids(store: Any) -> set[str]:
    from dcpm_cli.models import FAILED, PENDING

    return {r.id for r in store.raw_by_status([PENDING, FAILED])}


# -- kill -9 ----------------------------------------------------------------------------------


def kill_add(lab: Lab, tally: Tally, trials: int, rng: Any, *, extract: bool, size: int) -> None:
    """`dcpm add` SIGKILLed at random moments; a killed batch is the next trial's batch."""
    flags = [] if extract else ["--no-extract"]
    acknowledged: set[str] = set()
    carried: list[str] = []
    start = datetime(2026, 1, 1, tzinfo=UTC)
    # One run to learn how long an `add` takes here (start-up included).
    lines = batch(f"{tally.kind}-warmup", size, start)
    path = lab.home / "batch.jsonl"
    path.write_text("\n".join(lines) + "\n")
    t0 = time.perf_counter()
    code, out = lab.run("add", *flags, "--file", str(path))
    typical = time.perf_counter() - t0
    if code not in (0, 3):
        raise RuntimeError(f"dcpm add failed before any fault (exit {code}):\n{out}")
    acknowledged |= raw_ids(lines)
    for trial in range(trials):
        # A killed batch is run again (the rerun) until one run of it ends; then a fresh one.
        lines = carried or batch(f"{tally.kind}-{trial}", size, start + timedelta(days=trial + 1))
        path.write_text("\n".join(lines) + "\n")
        was_killed, code, out, typical = kill_trial(
            lab, tally, rng, typical, "add", *flags, "--file", str(path)
        )
        if was_killed:
            carried = lines  # the next trial runs it again
        elif code in (0, 3):  # 3: stored, extraction pending (the LLM failed)
            acknowledged |= raw_ids(lines)
            carried = []
        else:
            tally.note(f"trial {trial}: add exited {code}: {out.strip().splitlines()[-1:]}")
            carried = lines
        assess(lab, tally, acknowledged, f"trial {trial} ({'killed' if was_killed else 'not killed'})")
    # The rerun that completes the work: what was carried, then every pending input.
    if carried:
        path.write_text("\n".join(carried) + "\n")
        code, out = lab.run("add", *flags, "--file", str(path))
        if code in (0, 3):
            acknowledged |= raw_ids(carried)
        else:
            tally.incomplete += 1
            tally.note(f"final add exited {code}: {out.strip()[-300:]}")
    if extract:
        code, out = lab.run("process")
        left = pending_ids(lab.store())
        if code != 0 or left:
            tally.incomplete += 1
            tally.note(f"final process exited {code}, {len(left)} inputs still pending")
    assess(lab, tally, acknowledged, "after the final rerun")
    tally.acknowledged = len(acknowledged)


def kill_trial(lab: Lab, tally: Tally, rng: Any, typical: float, *args: str) -> tuple[bool, int, str, float]:
    """One trial: `dcpm ARGS` SIGKILLed at a random fraction of a typical run (or left to end);
    returns whether it was killed, its exit code and output, and the typical run time updated."""
    proc = lab.start(*args)
    t0 = time.perf_counter()
    was_killed = killed(proc, rng.uniform(KILL_FROM, KILL_TO) * typical)
    code, out = finish(proc)
    tally.trials += 1
    tally.killed += was_killed
    if was_killed:
        return True, code, out, typical * 1.1  # runs grow with the store: keep some of them finishing
    return False, code, out, 0.7 * typical + 0.3 * (time.perf_counter() - t0)


def kill_dream(lab: Lab, tally: Tally, trials: int, rng: Any, *, size: int) -> None:
    """`dcpm dream` SIGKILLed at random moments, with fresh pending inputs every trial."""
    start = datetime(2026, 6, 1, tzinfo=UTC)
    writer = lab.writer(lab.llm())
    first = batch("dream-seed", size * 3, start)
    writer.add(raw_inputs(first))  # extracted: facts to consolidate
    acknowledged = raw_ids(first)
    t0 = time.perf_counter()
    code, out = lab.run("dream")
    typical = time.perf_counter() - t0
    if code != 0:
        raise RuntimeError(f"dcpm dream failed before any fault (exit {code}):\n{out}")
    for trial in range(trials):
        lines = batch(f"dream-{trial}", size, start + timedelta(days=trial + 1))
        lab.writer(None).add(raw_inputs(lines), extract=False)
        acknowledged |= raw_ids(lines)
        was_killed, code, out, typical = kill_trial(lab, tally, rng, typical, "dream")
        if not was_killed and code != 0:
            tally.note(f"trial {trial}: dream exited {code}: {out.strip()[-300:]}")
        assess(lab, tally, acknowledged, f"trial {trial} ({'killed' if was_killed else 'not killed'})")
    code, out = lab.run("dream", "--json")
    status = _json_field(out, "status")
    left = pending_ids(lab.store())
    if code != 0 or status != "ok" or left:
        tally.incomplete += 1
        tally.note(f"final dream exited {code}, status {status}, {len(left)} inputs pending")
    assess(lab, tally, acknowledged, "after the final dream")
    tally.acknowledged = len(acknowledged)


def _json_field(out: str, name: str) -> str | None:
    start = out.find("{")
    try:
        return json.loads(out[start:])["run"][name]
    except (ValueError, KeyError, TypeError):
        return None


# -- kill -9 of `dcpm forget` ------------------------------------------------------------------

# Run `dcpm` with every Lance commit counted (add, delete, update, merge, index, optimize), and
# SIGKILLed just before commit number $FAULTS_KILL_AT: a kill at each stage of a write, not at a
# random moment. With 0, nothing is killed and the count is written to $FAULTS_COUNT_TO.
_AT_COMMIT = """
import atexit, os, signal, sys, runpy
from lancedb.table import LanceTable
at, seen = int(os.environ["FAULTS_KILL_AT"]), [0]
def counted(f):
    def wrapper(*a, **k):
        seen[0] += 1
        if seen[0] == at:
            os.kill(os.getpid(), signal.SIGKILL)
        return f(*a, **k)
    return wrapper
for name in ("add", "delete", "update", "_do_merge", "create_index", "optimize"):
    setattr(LanceTable, name, counted(getattr(LanceTable, name)))
if at == 0:
    atexit.register(lambda: open(os.environ["FAULTS_COUNT_TO"], "w").write(str(seen[0])))
sys.argv = ["dcpm", *sys.argv[1:]]
runpy.run_module("dcpm_cli", run_name="__main__")
"""


def secret_batch(tag: str, n: int, start: datetime) -> tuple[list[str], list[str], list[str]]:
    """n chat lines in one session, every third one holding a word found nowhere else; returns
    the lines, the lines to forget, and those words (lower case: as the full-text index
    keeps them)."""
    lines, secret, words = batch(tag, n, start), [], []
    for i in range(0, n, 3):
        word = f"zygo{zlib.crc32(f'{tag}-{i}'.encode()):x}quill"
        record = json.loads(lines[i])
        record["content"] += f", and the code word is {word.capitalize()}"
        lines[i] = json.dumps(record)
        secret.append(lines[i])
        words.append(word)
    return lines, secret, words


def words_on_disk(root: Path, words: list[str]) -> list[str]:
    """The words found in any byte of any file under `root` (case-insensitively)."""
    found: set[str] = set()
    needles = [w.encode() for w in words]
    for path in root.rglob("*"):
        if path.is_file():
            data = path.read_bytes().lower()
            found |= {w for w, n in zip(words, needles, strict=True) if n in data}
    return sorted(found)


def run_at_commit(lab: Lab, at: int, *args: str) -> tuple[int, str, int]:
    """`dcpm ARGS`, killed before its Lance commit number `at` (0: never); returns its exit
    code, output and (for 0) how many commits it made."""
    count = lab.home / "commits.txt"
    count.unlink(missing_ok=True)
    log = tempfile.TemporaryFile()  # noqa: SIM115 (closed by `finish`)
    env = lab.env(FAULTS_KILL_AT=str(at), FAULTS_COUNT_TO=str(count))
    proc = subprocess.Popen([sys.executable, "-c", _AT_COMMIT, *args], env=env, stdout=log, stderr=log)
    proc.log = log  # type: ignore[attr-defined]
    code, out = finish(proc)
    return code, out, int(count.read_text()) if count.exists() else 0


def seed_forget(lab: Lab, tag: str, size: int, start: datetime) -> tuple[set[str], set[str], list[str]]:
    """Inputs extracted (items, events, chains, passages) with secrets among them; returns the
    ids to keep, the ids to forget, and the words that must go with them."""
    lines, secret, words = secret_batch(tag, size, start)
    lab.writer(lab.llm()).add(raw_inputs(lines))
    forget = raw_ids(secret)
    on_disk = words_on_disk(lab.store_path, words)
    if on_disk != sorted(words):  # else the scan below could not see a leak
        raise RuntimeError(f"the secret words are not all stored as plain bytes: {on_disk}")
    return raw_ids(lines) - forget, forget, words


def after_forget(
    lab: Lab, tally: Tally, kept: set[str], forget: set[str], words: list[str], what: str
) -> None:
    """After a (killed) forget: `check` (one `--repair`); the forget finished or, if it was cut
    short before it changed anything, run again; then no byte of the store holds the words."""
    assess(lab, tally, kept, what)
    left = set(lab.store().get_raw(sorted(forget)))
    if left:
        tally.reruns += 1
        code, out = lab.run("forget", *sorted(left), "--yes")
        if code != 0:
            tally.incomplete += 1
            tally.note(f"{what}: the forget run again exited {code}: {out.strip()[-300:]}")
    found = words_on_disk(lab.store_path, words)
    if found:
        tally.leaked += len(found)
        tally.note(f"{what}: forgotten words still on disk: {found}")


def forget_stages(lab: Lab, tally: Tally, *, size: int) -> None:
    """`dcpm forget` killed before each of its Lance commits in turn, on a copy of one store;
    after each: check (one repair), and the forgotten words in no byte of the store."""
    import shutil

    kept, forget, words = seed_forget(lab, "forget-stages", size, datetime(2027, 3, 1, tzinfo=UTC))
    template = lab.home / "template"
    shutil.copytree(lab.store_path, template)
    code, out, commits = run_at_commit(lab, 0, "forget", *sorted(forget), "--yes")
    if code != 0 or not commits:
        raise RuntimeError(f"dcpm forget failed before any fault (exit {code}):\n{out}")
    for at in range(1, commits + 1):
        shutil.rmtree(lab.store_path)
        shutil.copytree(template, lab.store_path)
        code, out, _ = run_at_commit(lab, at, "forget", *sorted(forget), "--yes")
        tally.trials += 1
        tally.killed += code == -signal.SIGKILL
        if code not in (0, -signal.SIGKILL):
            tally.note(f"commit {at}: forget exited {code}: {out.strip()[-300:]}")
        after_forget(lab, tally, kept, forget, words, f"killed before commit {at} of {commits}")
    tally.acknowledged = len(kept)


def kill_forget(lab: Lab, tally: Tally, trials: int, rng: Any, *, size: int) -> None:
    """`dcpm forget` SIGKILLed at random moments, fresh secrets each trial."""
    start = datetime(2027, 4, 1, tzinfo=UTC)
    acknowledged: set[str] = set()
    typical = 0.0
    for trial in range(trials):
        kept, forget, words = seed_forget(lab, f"forget-{trial}", size, start + timedelta(days=trial))
        acknowledged |= kept
        args = ("forget", *sorted(forget), "--yes")
        if not typical:  # the first trial learns how long a forget takes here
            t0 = time.perf_counter()
            code, out = lab.run(*args)
            typical = time.perf_counter() - t0
            tally.trials += 1
            if code != 0:
                raise RuntimeError(f"dcpm forget failed before any fault (exit {code}):\n{out}")
        else:
            was_killed, code, out, typical = kill_trial(lab, tally, rng, typical, *args)
            if not was_killed and code != 0:
                tally.note(f"trial {trial}: forget exited {code}: {out.strip()[-300:]}")
        after_forget(lab, tally, acknowledged, forget, words, f"trial {trial}")
    tally.acknowledged = len(acknowledged)


# -- kill -9 of `dcpm import` ------------------------------------------------------------------


def exported(lab: Lab, tag: str, size: int, start: datetime, *, with_vectors: bool = False) -> Path:
    """An export of another store (inputs extracted: items, events, revision chains, and a
    dream's nodes and edges), written next to the lab's store; the source store stays."""
    from dcpm_cli.ops.portability import export_lines

    source = Lab(lab.home / f"source-{tag}", lab.server, lab.responder, lab.embedder)
    if not source.store_path.exists():
        source.home.mkdir(parents=True, exist_ok=True)
        source.writer(source.llm()).add(raw_inputs(batch(tag, size, start)))
        code, out = source.run("dream")
        if code != 0:
            raise RuntimeError(f"dcpm dream failed on the export's source (exit {code}):\n{out}")
    path = lab.home / f"{tag}{'-vectors' if with_vectors else ''}.jsonl"
    path.write_text(
        "\n".join(export_lines(source.store(), with_vectors=with_vectors)) + "\n", encoding="utf-8"
    )
    return path


def held(lab: Lab, with_data: bool, size: int) -> tuple[set[str], set[str]]:
    """The lab's store before an import: holding extracted inputs of its own, or empty (no
    store at all); returns the raw input and item ids it holds."""
    if not with_data:
        return set(), set()
    lines = batch("held", size, datetime(2025, 5, 1, tzinfo=UTC))
    lab.writer(lab.llm()).add(raw_inputs(lines))
    return raw_ids(lines), {i.id for i in lab.store().all_items()}


def export_records(path: Path) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for line in path.read_text(encoding="utf-8").splitlines()[1:]:
        record = json.loads(line)
        out.setdefault(record["type"], []).append(record)
    return out


def after_import(lab: Lab, tally: Tally, kept: tuple[set[str], set[str]], export: Path, what: str) -> None:
    """After a (killed) import: what the store held is all there, `check` holds (one
    `--repair`); importing again exits 0 and leaves every record of the file in the store,
    and `check` clean without a repair."""
    raws, items = kept
    assess(lab, tally, raws, what)
    if items and (gone := items - set(lab.store().get_items(sorted(items)))):
        tally.lost += len(gone)
        tally.note(f"{what}: {len(gone)} items held before the import are gone")
    code, out = lab.run("import", str(export))
    if code != 0:
        tally.incomplete += 1
        tally.note(f"{what}: the import run again exited {code}: {out.strip()[-300:]}")
        return
    store = lab.store()
    for kind, records in export_records(export).items():
        if left := store.new_record_keys(kind, [store.from_json(kind, r) for r in records]):
            tally.incomplete += 1
            tally.note(f"{what}: {len(left)} {kind} records still missing after importing again")
    ok, problems = check_store(store)
    if not ok:
        tally.broken_after += 1
        tally.note(f"{what}: check failed after importing again: {'; '.join(problems)}")


def import_stages(lab: Lab, tally: Tally, *, with_data: bool, size: int) -> None:
    """`dcpm import` killed before each of its Lance commits in turn, into a copy of one
    store (holding data, or none at all); after each: check (one repair), nothing held lost,
    and importing again completes the import."""
    import shutil

    export = exported(lab, "import-stages", size, datetime(2027, 5, 1, tzinfo=UTC))
    kept = held(lab, with_data, size)
    template = lab.home / "template"
    if with_data:
        shutil.copytree(lab.store_path, template)
    code, out, commits = run_at_commit(lab, 0, "import", str(export))
    if code != 0 or not commits:
        raise RuntimeError(f"dcpm import failed before any fault (exit {code}):\n{out}")
    for at in range(1, commits + 1):
        shutil.rmtree(lab.store_path, ignore_errors=True)
        if with_data:
            shutil.copytree(template, lab.store_path)
        code, out, _ = run_at_commit(lab, at, "import", str(export))
        tally.trials += 1
        tally.killed += code == -signal.SIGKILL
        if code not in (0, -signal.SIGKILL):
            tally.note(f"commit {at}: import exited {code}: {out.strip()[-300:]}")
        after_import(lab, tally, kept, export, f"killed before commit {at} of {commits}")
    tally.acknowledged = len(kept[0]) + len(export_records(export).get("raw", []))


def kill_import(lab: Lab, tally: Tally, trials: int, rng: Any, *, with_data: bool, size: int) -> None:
    """`dcpm import` SIGKILLed at random moments, into a copy of one store each trial."""
    import shutil

    export = exported(lab, "import-random", size, datetime(2027, 6, 1, tzinfo=UTC))
    kept = held(lab, with_data, size)
    template = lab.home / "template"
    if with_data:
        shutil.copytree(lab.store_path, template)
    t0 = time.perf_counter()
    code, out = lab.run("import", str(export))  # learns how long an import takes here
    typical = time.perf_counter() - t0
    if code != 0:
        raise RuntimeError(f"dcpm import failed before any fault (exit {code}):\n{out}")
    for trial in range(trials):
        shutil.rmtree(lab.store_path, ignore_errors=True)
        if with_data:
            shutil.copytree(template, lab.store_path)
        was_killed, code, out, typical = kill_trial(lab, tally, rng, typical, "import", str(export))
        if not was_killed and code != 0:
            tally.note(f"trial {trial}: import exited {code}: {out.strip()[-300:]}")
        after_import(lab, tally, kept, export, f"trial {trial} ({'killed' if was_killed else 'not killed'})")
    tally.acknowledged = len(kept[0]) + len(export_records(export).get("raw", []))


# -- hostile imports --------------------------------------------------------------------------


def _records(lines: list[str]) -> list[dict[str, Any]]:
    return [json.loads(line) for line in lines]


def _dump(records: list[dict[str, Any]], *, recount: bool = True) -> bytes:
    """Records as an export's bytes, the header's counts made to match (so that a case is
    refused for what it is, not for its counts)."""
    if recount:
        counts: dict[str, int] = dict.fromkeys(records[0]["counts"], 0)
        for r in records[1:]:
            counts[r["type"]] = counts.get(r["type"], 0) + 1
        records[0]["counts"] = counts
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records).encode("utf-8")


def _edit(lines: list[str], kind: str, change: Callable[[dict[str, Any]], None], nth: int = 0) -> bytes:
    records = _records(lines)
    change([r for r in records if r["type"] == kind][nth])
    return _dump(records)


def _cycle(lines: list[str]) -> bytes:
    records = _records(lines)
    a, b = [r for r in records if r["type"] == "item" and not (r["supersedes"] or r["superseded_by"])][:2]
    a["supersedes"] = a["superseded_by"] = b["id"]
    b["supersedes"] = b["superseded_by"] = a["id"]
    return _dump(records)


def _twice(lines: list[str]) -> bytes:
    records = _records(lines)
    raw = next(r for r in records if r["type"] == "raw")
    records.insert(records.index(raw) + 1, {**raw, "text": raw["text"] + " (edited)"})
    return _dump(records)


def _not_utf8(lines: list[str]) -> bytes:
    data = _edit(lines, "raw", lambda r: r.update(text=r["text"] + " caf\u00e9"))
    return data.replace("caf\u00e9".encode(), b"caf\xe9", 1)


# A hostile export: (what it is, how it is made from a good export's lines, a word its error
# must say). Each must be refused (exit 2) in one line naming what is wrong, with no
# traceback, leaving the store byte-identical.
HOSTILE: list[tuple[str, Callable[[list[str]], bytes], str]] = [
    ("cut at a line boundary", lambda ls: ("\n".join(ls[:-3]) + "\n").encode(), "header says"),
    ("cut mid-line", lambda ls: ("\n".join(ls) + "\n").encode()[:-40], "is not JSON"),
    ("empty", lambda ls: b"", "not a dcpm export"),
    ("no header", lambda ls: ("\n".join(ls[1:]) + "\n").encode(), "not a dcpm export"),
    ("a header of the wrong types", lambda ls: _edit(ls, "header", lambda h: h.update(dim="384")), "dim"),
    ("a newer format", lambda ls: _edit(ls, "header", lambda h: h.update(format=99)), "newer than"),
    ("a record missing a field", lambda ls: _edit(ls, "item", lambda r: r.pop("text")), "lacks the field"),
    ("a wrong type", lambda ls: _edit(ls, "raw", lambda r: r.update(text=12345)), "must be a string"),
    ("a null id", lambda ls: _edit(ls, "event", lambda r: r.update(id=None)), "not null"),
    ("NaN for a number", lambda ls: _edit(ls, "item", lambda r: r.update(salience=float("nan"))), "a number"),
    ("a year out of range", lambda ls: _edit(ls, "raw", lambda r: r.update(said_at="0001-01-01")), "range"),
    (
        "an unknown record type",
        lambda ls: (("\n".join(ls) + "\n") + '{"type": "secret", "id": "x"}\n').encode(),
        "unknown record type",
    ),
    (
        "a line that is not an object",
        lambda ls: (ls[0] + "\n[1, 2]\n" + "\n".join(ls[1:]) + "\n").encode(),
        "record",
    ),
    ("not UTF-8", _not_utf8, "UTF-8"),
    (
        "JSON nested 1,000 levels deep",
        lambda ls: _edit(ls, "item", lambda r: r.update(topic="DEEP")).replace(
            b'"DEEP"', b"[" * 1000 + b"]" * 1000, 1
        ),
        "deeper than",
    ),
    ("duplicate ids, different content", _twice, "twice"),
    (
        "a superseded_by to nowhere",
        lambda ls: _edit(ls, "item", lambda r: r.update(superseded_by="m_nowhere00000"), nth=-1),
        "m_nowhere00000",
    ),
    ("two items superseding each other", _cycle, "revision chain"),
    (
        "an item citing a raw input found nowhere",
        lambda ls: _edit(ls, "item", lambda r: r.update(raw_ids=["r_nowhere00000"])),
        "r_nowhere00000",
    ),
    (
        "an edge to a node found nowhere",
        lambda ls: _edit(ls, "edge", lambda r: r.update(src="n_nowhere00000")),
        "n_nowhere00000",
    ),
    (
        "a vector that is not base64",
        lambda ls: _edit(ls, "item", lambda r: r.update(vector="not base64!"), nth=-1),
        "vector",
    ),
]


@dataclass
class Hostile:
    """One row of the hostile-import table."""

    case: str
    code: int
    error: str  # the error line(s) the import printed
    traceback: bool
    store_changed: bool
    expected: str

    @property
    def clean(self) -> bool:
        lines = [ln for ln in self.error.splitlines() if ln.startswith("error:")]
        return (
            self.code == 2
            and not self.traceback
            and not self.store_changed
            and len(lines) == 1
            and self.expected in " ".join(self.error.split())
        )


def digest(folder: Path) -> dict[str, str]:
    """Every file under `folder` with the sha256 of its bytes."""
    import hashlib

    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def hostile_lines(lab: Lab, size: int) -> tuple[list[str], list[str]]:
    """A good export's lines, without and with vectors, and the lab's store holding data of
    its own (the store the hostile files are imported into)."""
    start = datetime(2027, 7, 1, tzinfo=UTC)
    plain = exported(lab, "hostile", size, start)
    vectors = exported(lab, "hostile", size, start, with_vectors=True)
    import shutil

    template = lab.home / "hostile-template"
    if not template.exists():
        shutil.rmtree(lab.store_path, ignore_errors=True)
        held(lab, True, size)
        shutil.copytree(lab.store_path, template)
    return plain.read_text(encoding="utf-8").splitlines(), vectors.read_text(encoding="utf-8").splitlines()


def hostile_import(lab: Lab, case: str, lines: tuple[list[str], list[str]]) -> Hostile:
    """`dcpm import` of one hostile file into (a fresh copy of) the lab's store."""
    import shutil

    name, make, expected = next(c for c in HOSTILE if c[0] == case)
    shutil.rmtree(lab.store_path)
    shutil.copytree(lab.home / "hostile-template", lab.store_path)
    path = lab.home / "hostile.jsonl"
    path.write_bytes(make(lines[1] if "vector" in name else lines[0]))
    before = digest(lab.store_path)
    code, out = lab.run("import", str(path))
    error = "\n".join(ln for ln in out.splitlines() if ln.strip() and "Traceback" not in ln)
    return Hostile(name, code, error, "Traceback" in out, digest(lab.store_path) != before, expected)


def hostile_table(rows: list[Hostile]) -> str:
    lines = ["| hostile export | exit | traceback | store changed | error |", "|---|---:|---|---|---|"]
    for r in rows:
        said = " ".join(r.error.split()).replace("|", "\\|")
        lines.append(
            f"| {r.case} | {r.code} | {'**yes**' if r.traceback else 'no'} "
            f"| {'**yes**' if r.store_changed else 'no'} | {said[:160]} |"
        )
    return "\n".join(lines)


# -- LLM faults -------------------------------------------------------------------------------


def llm_fault(lab: Lab, tally: Tally, phase: str, kind: str, *, size: int, round_: int) -> None:
    """One trial: inputs added while the LLM fails at `phase`; all stored and pending with
    their error; `process` completes them once the server behaves."""
    from dcpm_cli.models import DONE, FAILED, NO_ITEMS, PENDING

    start = datetime(2026, 9, 1, tzinfo=UTC) + timedelta(days=40 * round_)
    if phase == "reconcile" and not lab.store().all_items():
        lab.writer(lab.llm()).add(raw_inputs(batch("reconcile-seed", 5, start - timedelta(days=30))))
    lines = batch(f"{phase}-{kind}-{round_}", size, start)
    ids = raw_ids(lines)
    host = closed_host() if kind == "down" and phase == "extraction" else None
    lab.responder.fault = (phase, kind)
    try:
        report = lab.writer(lab.llm(host), llm_retries=1).add(raw_inputs(lines))
    finally:
        lab.responder.fault = None
    tally.trials += 1
    tally.acknowledged += report.stored
    store = lab.store()
    got = store.get_raw(sorted(ids))
    if len(got) != len(ids):
        tally.lost += len(ids) - len(got)
        tally.note(f"{phase}/{kind}: {len(ids) - len(got)} inputs not stored")
    waiting = [r for r in got.values() if r.status in (PENDING, FAILED)]
    if len(waiting) != len(got) or not all(r.error for r in waiting):
        tally.note(
            f"{phase}/{kind}: {len(got) - len(waiting)} inputs not pending; "
            f"{sum(not r.error for r in waiting)} without their error"
        )
        tally.incomplete += 1
    assess(lab, tally, ids, f"{phase}/{kind}")
    lab.writer(lab.llm()).process_pending()
    after = lab.store().get_raw(sorted(ids))
    if any(r.status not in (DONE, NO_ITEMS) for r in after.values()):
        tally.incomplete += 1
        tally.note(f"{phase}/{kind}: `process` left {sum(r.status != DONE for r in after.values())} undone")


# -- concurrency ------------------------------------------------------------------------------


def concurrency(lab: Lab, tally: Tally, *, writers: int, inputs: int) -> None:
    """Several `dcpm add` (with extraction) and a `dcpm dream`, all at once."""
    start = datetime(2027, 1, 1, tzinfo=UTC)
    seed = batch("concurrency-seed", 10, start - timedelta(days=10))
    lab.writer(lab.llm()).add(raw_inputs(seed))
    files, expected = [], set(raw_ids(seed))
    for w in range(writers):
        lines = batch(f"writer-{w}-{tally.trials}", inputs, start + timedelta(days=w))
        path = lab.home / f"writer-{w}.jsonl"
        path.write_text("\n".join(lines) + "\n")
        files.append((path, lines))
    procs = [(lab.start("add", "--file", str(p)), lines) for p, lines in files]
    dream = lab.start("dream")
    acknowledged = set(expected)
    for proc, lines in procs:
        code, out = finish(proc)
        if code in (0, 3):
            acknowledged |= raw_ids(lines)
        else:
            tally.note(f"a writer exited {code}: {out.strip()[-300:]}")
    code, out = finish(dream)
    if code != 0:
        tally.note(f"the dream exited {code}: {out.strip()[-300:]}")
    tally.trials += 1
    tally.acknowledged += len(acknowledged)
    assess(lab, tally, acknowledged, "writers and a dream at once")
    left = pending_ids(lab.store())
    if left:
        tally.incomplete += 1
        tally.note(f"{len(left)} inputs still pending after the writers finished")


# -- the bench --------------------------------------------------------------------------------


@contextmanager
def lab(embedder: Any, server: Any, responder: Responder, scratch: Path | None = None) -> Iterator[Lab]:
    with tempfile.TemporaryDirectory(prefix="dcpm-faults-", dir=scratch) as tmp:
        yield Lab(Path(tmp), server, responder, embedder)


def run_all(args: argparse.Namespace, log: Callable[[str], None] = print) -> list[Tally]:
    import numpy as np

    from dcpm_cli.embed import get_embedder

    embedder = get_embedder("minilm")
    rng = np.random.default_rng(args.seed)
    rows: list[Tally] = []

    def scenario(name: str, body: Callable[[Lab, Tally], None]) -> None:
        t0 = time.perf_counter()
        tally = Tally(name)
        with lab(embedder, server, responder) as L:
            body(L, tally)
        rows.append(tally)
        log(f"{name}: {tally.trials} trials, {tally.lost} inputs lost, {time.perf_counter() - t0:.0f} s")

    with fake_ollama() as (server, responder):
        if args.kills:
            for extract in (True, False):
                scenario(
                    f"kill -9 `dcpm add{'' if extract else ' --no-extract'}`",
                    lambda L, t, e=extract: kill_add(L, t, args.kills, rng, extract=e, size=args.batch),
                )
        if args.dream_kills:
            scenario(
                "kill -9 `dcpm dream`", lambda L, t: kill_dream(L, t, args.dream_kills, rng, size=args.batch)
            )
        if args.forget_kills:
            scenario("kill -9 `dcpm forget`, before each commit", lambda L, t: forget_stages(L, t, size=7))
            scenario(
                "kill -9 `dcpm forget`, at random",
                lambda L, t: kill_forget(L, t, args.forget_kills, rng, size=args.batch + 1),
            )
        if args.import_kills:
            for data in (True, False):
                into = "a store with data" if data else "an empty store"
                scenario(
                    f"kill -9 `dcpm import` into {into}, before each commit",
                    lambda L, t, d=data: import_stages(L, t, with_data=d, size=args.batch + 1),
                )
                scenario(
                    f"kill -9 `dcpm import` into {into}, at random",
                    lambda L, t, d=data: kill_import(
                        L, t, args.import_kills, rng, with_data=d, size=args.batch + 1
                    ),
                )
        for phase in PHASES if args.llm_rounds else ():
            for kind in FAULTS:
                scenario(
                    f"LLM {kind} at {phase}",
                    lambda L, t, p=phase, k=kind: [
                        llm_fault(L, t, p, k, size=args.batch, round_=r) for r in range(args.llm_rounds)
                    ],
                )
        if args.writers:
            scenario(
                f"{args.writers} writers × {args.inputs} inputs + a dream",
                lambda L, t: concurrency(L, t, writers=args.writers, inputs=args.inputs),
            )
    return rows


def run_hostile(log: Callable[[str], None] = print) -> list[Hostile]:
    from dcpm_cli.embed import get_embedder

    embedder, out = get_embedder("minilm"), []
    with fake_ollama() as (server, responder), lab(embedder, server, responder) as L:
        lines = hostile_lines(L, 4)
        for name, _, _ in HOSTILE:
            out.append(hostile_import(L, name, lines))
            log(f"hostile import, {name}: exit {out[-1].code}")
    return out


def table(rows: list[Tally]) -> str:
    lines = [
        "| fault | trials | inputs acknowledged | inputs lost | check failed "
        "| still failed after `--repair` | forgotten words on disk |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        trials = f"{r.trials} ({r.killed} killed mid-run)" if r.kind.startswith("kill") else str(r.trials)
        lines.append(
            f"| {r.kind} | {trials} | {r.acknowledged} | {r.lost} | {r.broken_before} | {r.broken_after} "
            f"| {r.leaked} |"
        )
    total = Tally("**all**")
    for r in rows:
        for name in ("trials", "killed", "acknowledged", "lost", "broken_before", "broken_after", "leaked"):
            setattr(total, name, getattr(total, name) + getattr(r, name))
    lines.append(
        f"| **all** | {total.trials} ({total.killed} killed) | {total.acknowledged} | **{total.lost}** "
        f"| {total.broken_before} | **{total.broken_after}** | **{total.leaked}** |"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--kills", type=int, default=12, help="kill -9 trials per `add` kind")
    p.add_argument("--dream-kills", type=int, default=8, help="kill -9 trials of `dcpm dream`")
    p.add_argument("--forget-kills", type=int, default=8, help="random kill -9 trials of `dcpm forget`")
    p.add_argument(
        "--import-kills", type=int, default=6, help="random kill -9 trials of `dcpm import`, per store"
    )
    p.add_argument("--no-hostile", action="store_true", help="skip the table of hostile imports")
    p.add_argument("--llm-rounds", type=int, default=12, help="trials per LLM fault kind and phase")
    p.add_argument("--writers", type=int, default=3, help="concurrent `dcpm add` processes")
    p.add_argument("--inputs", type=int, default=100, help="inputs per concurrent writer")
    p.add_argument("--batch", type=int, default=3, help="inputs per `add` in the kill and LLM trials")
    p.add_argument("--seed", type=int, default=7)
    args = p.parse_args(argv)
    t0 = time.perf_counter()
    rows = run_all(args)
    hostile = [] if args.no_hostile else run_hostile()
    print()
    print(table(rows))
    if hostile:
        print()
        print(hostile_table(hostile))
    print(f"\n{time.perf_counter() - t0:.0f} s in all")
    for r in rows:
        for what in r.problems[:10]:
            print(f"{r.kind}: {what}")
    if not all(r.clean for r in rows) or not all(h.clean for h in hostile):
        sys.exit(1)


if __name__ == "__main__":
    main()
