"""The `dcpm` entry point: the app with every command registered.

Each command module registers its commands on import, so the order here is the order `dcpm --help`
lists them in."""

# isort: off
from dcpm_cli.cli.app import app
from dcpm_cli.cli.commands import add  # noqa: F401  (add, process)
from dcpm_cli.cli.commands import read  # noqa: F401  (recall, history, show, stats, doctor)
from dcpm_cli.cli.commands import links  # noqa: F401  (link, unlink)
from dcpm_cli.cli.commands import bench  # noqa: F401  (bench longmemeval)
from dcpm_cli.cli.commands import check  # noqa: F401  (check)
from dcpm_cli.cli.commands import control  # noqa: F401  (forget, export, import, reembed, backup, config)
from dcpm_cli.cli.commands import dream  # noqa: F401  (dream, schemas)
from dcpm_cli.cli.commands import mcp  # noqa: F401  (mcp)
# isort: on

__all__ = ["app", "main"]


def main() -> None:
    app()
