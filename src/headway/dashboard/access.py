"""Who may act through the dashboard: a token made at the first start, and sessions with a
CSRF token each.

Reading needs no login. An action needs a session, opened by presenting the token; the token
is printed once when it is made and only its SHA-256 is kept (`dashboard-token.sha256` in the
state directory, mode 0600), so neither the file nor a backup of it lets anyone act. A token
of 32 random bytes cannot be guessed, so a plain digest suffices (a slow hash protects
passwords people choose, not random keys). Each session also gets a CSRF token that every
action must echo in a header: a page on another site can make a browser send the session
cookie, but cannot read the token to send along.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

__all__ = ["TOKEN_FILE", "Session", "Sessions", "TokenCheck", "ensure_token", "token_check"]

TOKEN_FILE = "dashboard-token.sha256"
_SESSION_LIMIT = 1000  # oldest sessions are forgotten past this many


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class TokenCheck:
    """The stored digest of the dashboard's token."""

    digest: str

    def accepts(self, token: str) -> bool:
        return hmac.compare_digest(self.digest, _digest(token.strip()))


def ensure_token(state_dir: Path) -> tuple[TokenCheck, str | None]:
    """The token's check, and the new token itself when this call made it (to print once)."""
    path = state_dir / TOKEN_FILE
    if path.exists():
        return token_check(path), None
    token = secrets.token_urlsafe(32)
    state_dir.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(_digest(token) + "\n")
    return TokenCheck(_digest(token)), token


def token_check(path: Path) -> TokenCheck:
    """Read a token file; a damaged one is an error naming the file and the way out."""
    text = path.read_text().strip()
    if len(text) != 64 or any(c not in "0123456789abcdef" for c in text):
        raise ValueError(
            f"{path}: not a SHA-256 hex digest; delete the file to have a new token made "
            "at the next start"
        )
    return TokenCheck(text)


@dataclass(frozen=True)
class Session:
    csrf: str
    identity: str  # who the person said they are at login ("" when they gave no name)


class Sessions:
    """Open sessions: an id (the cookie) -> its CSRF token and identity. In memory: a
    restart logs everyone out, which is the safe direction."""

    def __init__(self) -> None:
        self._open: dict[str, Session] = {}

    def open(self, identity: str = "") -> tuple[str, str]:
        """A new session's id and CSRF token."""
        if len(self._open) >= _SESSION_LIMIT:
            self._open.pop(next(iter(self._open)))
        session, csrf = secrets.token_urlsafe(32), secrets.token_urlsafe(32)
        self._open[session] = Session(csrf, identity.strip())
        return session, csrf

    def csrf_of(self, session: str | None) -> str | None:
        found = self._open.get(session or "")
        return found.csrf if found else None

    def identity_of(self, session: str | None) -> str:
        found = self._open.get(session or "")
        return found.identity if found else ""

    def allows(self, session: str | None, csrf: str | None) -> bool:
        """Whether a request with this cookie and this CSRF header may act."""
        expected = self.csrf_of(session)
        return expected is not None and csrf is not None and hmac.compare_digest(expected, csrf)

    def close(self, session: str | None) -> None:
        self._open.pop(session or "", None)
