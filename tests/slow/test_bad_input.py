"""Bad input, as a user gives it to the real CLI: each gets one clear error line (no
traceback), its documented exit code (README: 2 bad input, 4 store unusable), and nothing
already stored is touched (the store's files are byte-identical afterwards)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest
from support.files import snapshot
from support.procs import without_root_powers
from support.replies import extraction, item

from dcpm_cli.models import DONE, PENDING, RawInput

SEED = ["I water the tomatoes every morning.", "My sister Hanna lives in Oslo."]


def error_lines(stderr: str) -> list[str]:
    return [ln for ln in stderr.splitlines() if ln.startswith("error:") or "Error" in ln]


def write(tmp: Path, name: str, data: str | bytes) -> str:
    path = tmp / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8"))
    return str(path)


JSONL_OK = '{"role": "user", "content": "fine"}\n'

# (id, setup(tmp, home) -> the CLI's arguments, stdin, exit code, what the error line says)
CASES: list[tuple[str, Callable[[Path, Path], list[str]], str | bytes | None, int, str]] = [
    ("empty", lambda t, h: ["add", ""], None, 2, "nothing to add: the input is empty"),
    ("whitespace only", lambda t, h: ["add", " \n\t "], None, 2, "nothing to add: the input is empty"),
    ("empty stdin", lambda t, h: ["add", "-"], b"", 2, "nothing to add: the input is empty"),
    (
        "invalid UTF-8 file",
        lambda t, h: ["add", "--file", write(t, "notes.txt", b"caf\xe9 au lait")],
        None,
        2,
        "notes.txt is not UTF-8 text",
    ),
    (
        "NUL bytes",
        lambda t, h: ["add", "--file", write(t, "notes.txt", "line one\nline\x00two\n")],
        None,
        2,
        "notes.txt holds a NUL byte (line 2): it looks binary, not text",
    ),
    (
        "a binary file",
        lambda t, h: ["add", "--file", write(t, "photo.jpg", bytes(range(256)) * 40)],
        None,
        2,
        "photo.jpg is not UTF-8 text",
    ),
    (
        "malformed JSONL mid-file",
        lambda t, h: ["add", "--file", write(t, "chat.jsonl", JSONL_OK + "{oops\n" + JSONL_OK)],
        None,
        2,
        "chat.jsonl line 2: not JSON",
    ),
    (
        "an unknown suffix holding binary",
        lambda t, h: ["add", "--file", write(t, "data.xyz", b"\x89PNG\r\n\x1a\n\xff\x00")],
        None,
        2,
        "data.xyz is not UTF-8 text",
    ),
    (
        "a nonexistent file",
        lambda t, h: ["add", "--file", str(t / "missing.md")],
        None,
        2,
        "no such file",
    ),
    (
        "a directory without daily notes as --file",
        lambda t, h: ["add", "--file", str(t)],
        None,
        2,
        "no daily notes in",
    ),
    ("garbage --at", lambda t, h: ["add", "x", "--at", "next tuesday"], None, 2, "cannot read --at"),
    ("--at near year 1", lambda t, h: ["add", "x", "--at", "0001-01-01"], None, 2, "out of range"),
    ("garbage --as-of", lambda t, h: ["recall", "x", "--as-of", "yesterday"], None, 2, "cannot read --as-of"),
    ("--as-of 1e20", lambda t, h: ["recall", "x", "--as-of", "1e20"], None, 2, "cannot read --as-of"),
    (
        "JSONL timestamp near year 1",
        lambda t, h: ["add", "-"],
        '{"role": "user", "content": "old", "timestamp": "0001-01-01"}\n',
        2,
        "timestamp on line 1 '0001-01-01' is out of range",
    ),
    (
        "JSONL content with half a character",
        lambda t, h: ["add", "-"],
        '{"role": "user", "content": "a \\ud800 b"}\n',
        2,
        "stdin line 1: content holds a lone surrogate",
    ),
    (
        "JSONL content with a NUL",
        lambda t, h: ["add", "-"],
        '{"role": "user", "content": "my PIN is \\u00001234"}\n',
        2,
        "stdin line 1: content holds a NUL byte",
    ),
    (
        "JSONL timestamp NaN",
        lambda t, h: ["add", "-"],
        '{"role": "user", "content": "when?", "timestamp": NaN}\n',
        2,
        "cannot read timestamp on line 1 nan",
    ),
    (
        "JSONL timestamp 1e20",
        lambda t, h: ["add", "-"],
        '{"role": "user", "content": "when?", "timestamp": 1e20}\n',
        2,
        "cannot read timestamp on line 1 1e+20",
    ),
    ("-k 0", lambda t, h: ["recall", "tomatoes", "-k", "0"], None, 2, "Invalid value for '-k'"),
    ("an unknown id to show", lambda t, h: ["show", "m_000000000000"], None, 2, "no item, raw input or node"),
    (
        "a store path that is a file",
        lambda t, h: ["--store", write(t, "store.txt", "not a store"), "add", "--no-extract", "x"],
        None,
        4,
        "store.txt is a file, not a directory",
    ),
    (
        "a store under a file",
        lambda t, h: ["--store", write(t, "plain", "x") + "/store", "add", "--no-extract", "x"],
        None,
        4,
        "cannot create the store",
    ),
    (
        "a corrupt config.toml",
        lambda t, h: [write(h, "config.toml", "top_k = [\n") and "stats"],
        None,
        2,
        "config.toml",
    ),
    (
        "a config.toml that is not UTF-8",
        lambda t, h: [write(h, "config.toml", b"llm = '\xff'\n") and "stats"],
        None,
        2,
        "config.toml",
    ),
    (
        "a config.toml that is a directory",
        lambda t, h: [(h / "config.toml").mkdir() or "stats"],
        None,
        2,
        "config.toml",
    ),
    (
        "an unknown embedder",
        lambda t, h: ["--embedder", "bert-9000", "add", "x"],
        None,
        2,
        "unknown embedder",
    ),
    ("an unknown LLM", lambda t, h: ["--llm", "gpt-nine", "add", "x"], None, 2, "unknown LLM 'gpt-nine'"),
    (
        "a NUL byte in a ChatGPT export",
        lambda t, h: [
            "add",
            "--no-extract",
            "--file",
            write(
                t,
                "conversations.json",
                '[{"id": "c1", "title": "t", "current_node": "a", "mapping": {"a": {"id": "a", '
                '"message": {"author": {"role": "user"}, "create_time": 1772355600, '
                '"content": {"content_type": "text", "parts": ["bin\\u0000ary"]}}}}}]',
            ),
        ],
        None,
        2,
        "a message holds a NUL byte",
    ),
    (
        "a ChatGPT export that is not UTF-8",
        lambda t, h: [
            "add",
            "--format",
            "chatgpt",
            "--file",
            write(t, "conversations.json", b'[{"mapping": {}, "current_node": null, "title": "caf\xe9"}]'),
        ],
        None,
        2,
        "conversations.json is not UTF-8 text; nothing was stored",
    ),
    (
        "a malformed line in a scripted LLM file",
        lambda t, h: ["--llm", "scripted:" + write(t, "replies.jsonl", '{"items": []}\n{oops\n'), "add", "x"],
        None,
        2,
        "replies.jsonl line 2: not JSON",
    ),
    (
        "JSON nested 1,000 levels deep",
        lambda t, h: ["add", "--no-extract", "--file", write(t, "deep.json", "[" * 1000 + "]" * 1000)],
        None,
        2,
        "deep.json nests JSON deeper than 200 levels; nothing was stored",
    ),
    (
        "a JSONL line nested 1,000 levels deep",
        lambda t, h: ["add", "--no-extract", "-"],
        JSONL_OK + '{"role": "user", "content": "x", "meta": ' + "[" * 1000 + "]" * 1000 + "}\n",
        2,
        "line 2 nests JSON deeper than 200 levels",
    ),
    (
        "a ChatGPT export nested 1,000 levels deep",
        lambda t, h: [
            "add",
            "--no-extract",
            "--file",
            write(
                t,
                "conversations.json",
                '[{"mapping": {}, "current_node": null, "x": ' + "[" * 1000 + "]" * 1000 + "}]",
            ),
        ],
        None,
        2,
        "conversations.json nests JSON deeper than 200 levels",
    ),
    (
        "a ChatGPT export on stdin nested 1,000 levels deep",
        lambda t, h: ["add", "--no-extract", "-"],
        '[{"mapping": {}, "current_node": null, "x": ' + '{"a": ' * 1000 + "1" + "}" * 1000 + "}]",
        2,
        "nests JSON deeper than 200 levels",
    ),
]


@pytest.fixture
def seeded(cli, dcpm_home: Path) -> dict[str, str]:
    """A store holding two inputs; returns its files' hashes."""
    for text in SEED:
        assert cli("add", "--no-extract", text).exit_code == 0
    return snapshot(dcpm_home / "store")


@pytest.mark.parametrize(
    ("args", "stdin", "code", "message"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_bad_input_is_one_clear_line_and_touches_nothing(
    cli, seeded, dcpm_home: Path, tmp_path: Path, args, stdin, code: int, message: str
) -> None:
    cli.llm = None  # the CLI builds the LLM from its settings, as for a user
    argv = args(tmp_path, dcpm_home)

    done = cli(*argv, input=stdin)

    assert done.exit_code == code, done.stderr
    assert message in " ".join(done.stderr.split())
    assert len(error_lines(done.stderr)) == 1, done.stderr
    assert done.stdout == ""
    assert snapshot(dcpm_home / "store") == seeded


def test_piped_stdin_that_cannot_be_stored_is_kept_byte_for_byte(cli, seeded, dcpm_home: Path) -> None:
    """Whatever fails after stdin was read (here: a timestamp out of range, a bad LLM name, an
    unknown embedder, a store that is a file), the bytes are kept and the message says where."""
    cli.llm = None
    log = (
        b'{"role": "user", "content": "caf\xc3\xa9 \xe2\x98\x95"}\n'
        b'{"role": "user", "content": "x", "timestamp": 1e20}\n'
    )
    failures = [
        ["add", "-"],
        ["--llm", "gpt-nine", "add", "-", "--format", "text"],
        ["--embedder", "bert-9000", "add", "-", "--format", "text"],
        ["--store", str(dcpm_home / "rejected-is-not-a-store.txt"), "add", "-", "--format", "text"],
    ]
    (dcpm_home / "rejected-is-not-a-store.txt").write_text("a file")

    for n, argv in enumerate(failures, 1):
        done = cli(*argv, input=log)

        assert done.exit_code in (2, 4), done.stderr
        kept = sorted((dcpm_home / "rejected").iterdir())
        assert len(kept) == n
        assert kept[-1].read_bytes() == log
        assert f"what was piped in is kept at {kept[-1]}" in "".join(done.stderr.split("\n"))
    assert snapshot(dcpm_home / "store") == seeded


def test_stdin_once_stored_is_not_kept(cli, dcpm_home: Path) -> None:
    cli.llm = None
    done = cli("--llm", "gpt-nine", "add", "--no-extract", "-", input="A bad --llm does not matter here.\n")

    assert done.exit_code == 0, done.stderr
    assert not list((dcpm_home / "rejected").iterdir())  # kept while it mattered, then removed
    (raw,) = cli.open_store().raw_by_status([PENDING])
    assert raw.text == "A bad --llm does not matter here."


def test_accepted_odd_inputs_leave_earlier_inputs_as_they_were(cli, seeded, tmp_path: Path) -> None:
    """An unknown suffix holding text is text; what was stored before is unchanged."""
    notes = tmp_path / "notes.xyz"
    notes.write_text("Planted garlic in October.\n", encoding="utf-8")
    before = cli.open_store().raw_by_status([PENDING])

    done = cli("add", "--no-extract", "--file", str(notes))

    assert done.exit_code == 0, done.stderr
    after = {r.id: r for r in cli.open_store().raw_by_status([PENDING])}
    assert all(after[r.id] == r for r in before)
    assert "Planted garlic in October." in {r.text for r in after.values()}


def test_a_store_the_user_cannot_write_is_a_clear_error() -> None:
    prefix = without_root_powers()
    if prefix is None:
        pytest.skip("running as root without setpriv: permissions cannot bind")
    home = Path(tempfile.mkdtemp(prefix="dcpm-ro-"))
    try:
        env = {
            **os.environ,
            "DCPM_HOME": str(home),
            "PYTHONPATH": os.pathsep.join(sys.path),
            "COLUMNS": "200",
        }
        dcpm = [sys.executable, "-m", "dcpm_cli"]
        seed = subprocess.run(
            [*dcpm, "add", "--no-extract", SEED[0]], env=env, capture_output=True, text=True
        )
        assert seed.returncode == 0, seed.stderr
        for p in [home / "store", *(home / "store").rglob("*")]:
            p.chmod(0o500 if p.is_dir() else 0o400)
        before = snapshot(home / "store")

        done = subprocess.run(
            [*prefix, *dcpm, "add", "-"], input="piped words", env=env, capture_output=True, text=True
        )

        assert done.returncode == 4, done.stderr
        assert "Traceback" not in done.stderr
        assert error_lines(done.stderr) == [
            f"error: cannot write to the store at {home / 'store'}: permission denied"
        ]
        (kept,) = (home / "rejected").iterdir()
        assert kept.read_text() == "piped words"
        assert snapshot(home / "store") == before
    finally:
        for p in [home, *home.rglob("*")]:
            p.chmod(0o700)
        shutil.rmtree(home)


def test_json_nested_100000_levels_fails_fast_in_bounded_memory(tmp_path: Path) -> None:
    """200 KB of brackets once grew a process to 22 GB: the depth is refused before a parser
    sees it. The child runs under an address-space limit, so a regression fails instead of
    exhausting the machine."""
    import resource

    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    env = {**os.environ, "DCPM_HOME": str(tmp_path / "home"), "PYTHONPATH": os.pathsep.join(sys.path)}
    limit = 4 * 1024**3

    def bounded() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    done = subprocess.run(
        [sys.executable, "-m", "dcpm_cli", "add", "--no-extract", "--file", str(deep)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=bounded,
    )

    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert "nests JSON deeper than 200 levels" in done.stderr
    assert not (tmp_path / "home" / "store").exists()


def test_an_input_near_year_1_stored_by_an_older_dcpm_does_not_block_extraction(writer, llm) -> None:
    old = RawInput(text="I was born.", session="s", said_at=datetime(1, 1, 1, tzinfo=UTC))
    writer.persist([old])
    llm.enqueue(extraction(item("The user was born.")))

    report = writer.process_pending()

    assert report.extracted == 1, report
    assert writer.store.get_raw([old.id])[old.id].status == DONE


def test_an_argument_that_is_not_utf8_is_refused_not_a_traceback(tmp_path: Path) -> None:
    """Bytes that are not UTF-8 on the command line (a Latin-1 terminal, a script's variable)
    reach Python as lone surrogates; they are refused in one line, exit 2, nothing stored."""
    env = {**os.environ, "DCPM_HOME": str(tmp_path / "home"), "PYTHONPATH": os.pathsep.join(sys.path)}
    dcpm = [sys.executable, "-m", "dcpm_cli"]
    for args in (["add", "--no-extract", b"caf\xe9"], ["add", "--no-extract", "--session", b"s\xff", "hi"]):
        done = subprocess.run([*dcpm, *args], env=env, capture_output=True)
        err = done.stderr.decode("utf-8", "replace")
        assert done.returncode == 2, err
        assert "Traceback" not in err and "not UTF-8" in err
    assert not (tmp_path / "home" / "store").exists()
