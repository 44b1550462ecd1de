"""The CLI's access to settings, loaded on first use: importing ``rag_lab.config`` (pydantic-settings)
costs about a second, which ``rag-lab --help`` and argument errors must not pay."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rag_lab.config import Settings


def get_settings() -> Settings:
    from rag_lab.config import get_settings as configured

    return configured()
