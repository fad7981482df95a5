"""Every command the app offers is documented: it has help text, and README.md names it as
`dcpm NAME` (sub-commands as `dcpm GROUP NAME`)."""

from __future__ import annotations

import click
import pytest
import typer
from support.paths import README

from dcpm_cli.cli.main import app


def commands(group: click.Group, prefix: str = "dcpm") -> list[tuple[str, click.Command]]:
    found = []
    for name, command in sorted(group.commands.items()):
        if command.hidden:
            continue
        found.append((f"{prefix} {name}", command))
        if isinstance(command, click.Group):
            found += commands(command, f"{prefix} {name}")
    return found


COMMANDS = commands(typer.main.get_command(app))


def test_the_app_has_commands() -> None:
    assert {"dcpm add", "dcpm recall", "dcpm dream", "dcpm check"} <= {name for name, _ in COMMANDS}


@pytest.mark.parametrize(("name", "command"), COMMANDS, ids=[name for name, _ in COMMANDS])
def test_every_command_has_help_text(name: str, command: click.Command) -> None:
    assert (command.help or command.short_help or "").strip(), f"{name} has no help text"


@pytest.mark.parametrize("name", [name for name, _ in COMMANDS])
def test_every_command_appears_in_the_readme(name: str) -> None:
    assert name in README.read_text(encoding="utf-8"), f"README.md never shows `{name}`"
