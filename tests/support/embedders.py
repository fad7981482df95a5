"""Which optional embedding models this machine has."""

from __future__ import annotations

import pytest


def mpnet_installed() -> bool:
    """The five all-mpnet-base-v2 part packages (~420 MB, see mpnet.INSTALL_HINT) are installed."""
    from importlib.metadata import PackageNotFoundError, distribution

    from dcpm_cli.mpnet import PARTS

    try:
        for name in PARTS:
            distribution(name)
    except PackageNotFoundError:
        return False
    return True


needs_mpnet = pytest.mark.skipif(not mpnet_installed(), reason="the mpnet parts are not installed")
