"""User-facing errors: what was wrong and what to do about it."""

from __future__ import annotations


class RagLabError(Exception):
    """An error the user can fix. The CLI prints it without a traceback (unless --debug)."""

    def __init__(self, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint

    def __str__(self) -> str:
        return f"{self.message}\n  → {self.hint}" if self.hint else self.message


def one_of(names) -> str:
    """``"a, b or c"``: the choices an error names."""
    names = list(names)
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def json_error_text(msg: str) -> str:
    """A ``json.JSONDecodeError.msg`` ready to be followed by "at column N": some messages already end
    in " at" ("Invalid control character at"), which would read "at at column"."""
    return msg.removesuffix(" at").rstrip(":")


class ConfigError(RagLabError):
    """A missing or invalid configuration value."""


class DatasetError(RagLabError):
    """An unknown, empty or malformed dataset."""


class IndexNotReadyError(RagLabError):
    """The index is missing, incomplete or was built with other settings."""


class ProviderError(RagLabError):
    """A model or search provider failed after bounded retries."""


class RagLabWarning(UserWarning):
    """Something the user should know; the CLI prints it as one line."""


def warn_at_caller(warning: Warning) -> None:
    """``warnings.warn(warning)`` attributed to the first frame outside rag-lab — the user's line that
    called the API, not the library line that noticed (however deep that is)."""
    import os
    import sys
    import warnings

    package = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frame, level = sys._getframe(1), 2
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(package):
        frame, level = frame.f_back, level + 1
    warnings.warn(warning, stacklevel=level)


class StaleIndexWarning(RagLabWarning):
    """The dataset's files changed since its index was built."""
