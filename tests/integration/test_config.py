"""One settings resolver (flag > environment > config.toml > default) for every command, values
checked, and `dcpm config show` telling where each came from."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.paths import README

from dcpm_cli.config import DreamOptions, Settings
from dcpm_cli.errors import InputError


def write_config(home: Path, text: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.toml").write_text(text, encoding="utf-8")


def shown(cli, *args: str, **env: str) -> dict[str, dict]:
    res = cli(*args, "config", "show", "--json", **env)
    assert res.exit_code == 0, res.stderr
    return {r["key"]: r for r in json.loads(res.stdout)}


def test_config_show_names_the_source_of_every_setting(cli, dcpm_home: Path) -> None:
    write_config(dcpm_home, 'llm = "ollama:from-file"\njudge_k = 4\n[dream]\neps1 = 0.4\nmode = "lite"\n')

    got = shown(cli, "--llm", "ollama:from-flag", DCPM_HISTORY_WINDOW="9", DCPM_DREAM_MODE="no-collision")

    assert (got["llm"]["value"], got["llm"]["source"]) == ("ollama:from-flag", "flag")
    assert (got["history_window"]["value"], got["history_window"]["source"]) == (9, "env")
    assert (got["judge_k"]["value"], got["judge_k"]["source"]) == (4, "file")
    assert (got["dream.eps1"]["value"], got["dream.eps1"]["source"]) == (0.4, "file")
    assert (got["dream.mode"]["value"], got["dream.mode"]["source"]) == ("no-collision", "env")
    assert (got["llm_timeout"]["value"], got["llm_timeout"]["source"]) == (120.0, "default")
    assert got["store"] == {
        "key": "store",
        "name": "store",
        "value": str(dcpm_home / "store"),
        "source": "default",
        "env": "DCPM_STORE",
    }
    assert got["dream.core_schemas"]["env"] == "DCPM_CORE_SCHEMAS"
    # An environment variable typer reads for a root option is reported as such, not as a flag.
    assert shown(cli, DCPM_EMBEDDER="minilm-int8")["embedder"]["source"] == "env"
    table = cli("config", "show")
    assert "dream.eps1" in table.stdout and "file" in table.stdout


@pytest.mark.parametrize(
    ("where", "setting", "message"),
    [
        (
            "file",
            "llm_retries = -5",
            "setting 'llm_retries' must be between 0 and 20, got -5 (from config.toml)",
        ),
        (
            "env",
            ("DCPM_JUDGE_K", "-3"),
            "setting 'judge_k' must be between 1 and 10, got -3 (from the environment)",
        ),
        ("flag", ("--llm-timeout", "0"), "setting 'llm_timeout' must be greater than 0, got 0.0"),
        (
            "file",
            "[dream]\neps1 = 5",
            "setting 'dream.eps1' must be between 0 and 2 (a cosine distance), got 5.0",
        ),
        ("env", ("DCPM_DREAM_MAX_CALLS", "-1"), "setting 'dream.max_calls' must be at least 0, got -1"),
        ("file", 'judge_k = "many"', "setting 'judge_k' must be an integer, got 'many' (from config.toml)"),
        ("file", 'judge_k = "3"', "setting 'judge_k' must be an integer, got '3' (from config.toml)"),
        ("file", "judge_k = true", "setting 'judge_k' must be an integer, got True (from config.toml)"),
        ("file", "judge_k = 3.0", "setting 'judge_k' must be an integer, got 3.0 (from config.toml)"),
        ("file", 'named_ends = "yes"', "setting 'named_ends' must be true or false, got 'yes'"),
        ("file", "named_ends = 0", "setting 'named_ends' must be true or false, got 0 (from config.toml)"),
        ("file", 'store = ""', "setting 'store' must be a path or a LanceDB URI, got '' (from config.toml)"),
        ("file", "topk = 3", "unknown setting 'topk' in"),
        ("file", "[dream]\nepsilon = 0.3", "unknown setting 'epsilon' in the dream table of"),
    ],
)
def test_bad_settings_are_refused_with_one_clear_line(cli, dcpm_home: Path, where, setting, message) -> None:
    env, flags = {}, []
    if where == "file":
        write_config(dcpm_home, setting + "\n")
    elif where == "env":
        env = dict([setting])
    else:
        flags = list(setting)

    for command in (["recall", "anything"], ["dream", "--dry-run"], ["config", "show"]):
        res = cli(*flags, *command, **env)
        assert res.exit_code == 2, (command, res.stdout)
        text = " ".join(res.stderr.split())
        if "Invalid value for '--max-calls'" in text:  # typer checks the dream flag's own variable first
            continue
        assert message in text, res.stderr
        assert "hint:" in res.stderr


@pytest.mark.parametrize(
    ("flags", "env", "file", "hint"),
    [
        ([], {"DCPM_HISTORY_GAP_MINUTES": "-1"}, "", "check DCPM_HISTORY_GAP_MINUTES (it overrides"),
        ([], {}, "judge_k = 0", "check judge_k in config.toml"),
        (["--llm-timeout", "0"], {}, "", "check --llm-timeout"),
        ([], {"DCPM_DREAM_MAX_CALLS": "x"}, "", "check DCPM_DREAM_MAX_CALLS"),
    ],
)
def test_a_bad_value_hints_where_it_came_from(cli, dcpm_home: Path, flags, env, file, hint) -> None:
    """The hint names the flag, variable or config line that gave the value, never a flag that
    does not exist (there is no --history-gap-minutes)."""
    write_config(dcpm_home, file + "\n")
    res = cli(*flags, "config", "show", **env)
    assert res.exit_code == 2, res.stdout
    text = " ".join(res.stderr.split())
    assert hint in text, text
    if not flags:
        assert "check --" not in text, text


def test_settings_and_dream_options_share_one_resolver(dcpm_home: Path, monkeypatch) -> None:
    write_config(dcpm_home, "llm_retries = 4\n[dream]\nretries = 1\nmax_group = 3\n")
    monkeypatch.setenv("DCPM_DREAM_MAX_GROUP", "5")
    assert Settings.resolve().llm_retries == 4
    assert Settings.resolve(llm_retries=0).llm_retries == 0
    opts = DreamOptions.resolve()
    assert (opts.retries, opts.max_group) == (1, 5)
    monkeypatch.setenv("DCPM_CORE_SCHEMAS", "perhaps")
    with pytest.raises(InputError, match=r"dream\.core_schemas"):
        DreamOptions.resolve()


def test_each_control_command_has_help_and_a_readme_line(cli) -> None:
    readme = README.read_text(encoding="utf-8")
    for command in (["forget"], ["export"], ["import"], ["reembed"], ["backup"], ["config", "show"]):
        res = cli(*command, "--help")
        assert res.exit_code == 0 and "Usage" in res.stdout, command
        assert f"dcpm {' '.join(command)}" in readme, command


def test_a_path_with_brackets_is_shown_as_text(cli, tmp_path: Path) -> None:
    """A store path is not Rich markup: "[/]" in it used to crash `stats` and `config show`."""
    home = tmp_path / "a[/]b[bold]"  # two directories: "a[" and "]b[bold]"
    home.mkdir(parents=True)
    assert cli("add", "--no-extract", "hello", DCPM_HOME=str(home)).exit_code == 0
    for args in (["stats"], ["config", "show"]):
        res = cli(*args, DCPM_HOME=str(home), COLUMNS="250")
        assert res.exit_code == 0, (args, res.stderr)
        assert "[bold]" in res.stdout, args  # shown as text, not taken as a style


def test_a_relative_store_in_config_toml_is_read_against_its_folder(
    cli, dcpm_home: Path, tmp_path: Path, monkeypatch
) -> None:
    """`dcpm add` in one folder and `dcpm recall` in another see the same memory."""
    write_config(dcpm_home, 'store = "memories/main"\n')
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)

    assert Settings.resolve().store == str(dcpm_home / "memories" / "main")
    got = shown(cli)["store"]
    assert (got["value"], got["source"]) == (str(dcpm_home / "memories" / "main"), "file")
    assert "relative to the folder of config.toml" in got["note"]
    assert "relative to the folder of config.toml" in cli("config", "show").stderr
    assert cli("add", "--no-extract", "Relative stores stay put.").exit_code == 0
    assert (dcpm_home / "memories" / "main").is_dir() and not (elsewhere / "memories").exists()


@pytest.mark.parametrize("value", ["5", "true", "[1, 2]"])
def test_a_store_that_is_not_a_string_is_refused(
    cli, dcpm_home: Path, tmp_path: Path, monkeypatch, value
) -> None:
    write_config(dcpm_home, f"store = {value}\n")
    monkeypatch.chdir(tmp_path)

    res = cli("add", "--no-extract", "x")

    assert res.exit_code == 2, res.stderr
    assert "setting 'store' must be a string" in " ".join(res.stderr.split())
    assert not (tmp_path / "5").exists() and not (dcpm_home / "5").exists()


def test_a_config_file_saved_with_a_byte_order_mark_is_read(cli, dcpm_home: Path) -> None:
    dcpm_home.mkdir(parents=True, exist_ok=True)
    (dcpm_home / "config.toml").write_bytes(b"\xef\xbb\xbfjudge_k = 4\n")  # as Notepad saves it
    assert shown(cli)["judge_k"]["value"] == 4
