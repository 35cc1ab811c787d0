"""Proxy-side users (`[server] users = { name = "<hash>" }`) for backends that cannot check a
client's credentials themselves (FalkorDB): scrypt password hashes (stdlib only) and the
Bolt frontend's logon check.

A hash reads `scrypt$<n>$<r>$<p>$<salt>$<key>` (salt and key base64); `query-guard
hash-password` prints one. Checking a password costs tens of milliseconds on purpose (that is
what makes stolen hashes expensive to guess), so it runs in a worker thread, never on the
event loop — in a small pool of the directory's own, so a backend or guard that keeps every
other thread busy cannot stall logins.
"""

from __future__ import annotations

import asyncio
import base64
import concurrent.futures
import hashlib
import hmac
import inspect
import ipaddress
import secrets
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from typing import Any
from urllib.parse import urlsplit

from query_guard.errors import ConfigError

SCHEME = "scrypt"
N, R, P = 2**14, 8, 1  # scrypt cost: ~16 MB and tens of ms per check
KEY_BYTES = 32
_MAXMEM = 64 * 1024 * 1024
VERIFIED_CACHE = 256  # credentials remembered as verified (keyed digests)
CHECK_THREADS = 2  # password checks at once per directory (each costs ~16 MB of memory)
# A logon check: the client's HELLO / LOGON auth map -> accepted (maybe awaitable).
LogonCheck = Callable[[dict[str, Any]], bool | Awaitable[bool]]


def hash_password(password: str, *, n: int = N, r: int = R, p: int = P) -> str:
    """A fresh salted hash of `password` for `[server] users`."""
    salt = secrets.token_bytes(16)
    key = _derive(password, salt, n, r, p)
    return "$".join((SCHEME, str(n), str(r), str(p), _b64(salt), _b64(key)))


def verify_password(password: str, stored: str) -> bool:
    """Does `password` match the `stored` hash? (Constant-time comparison.)"""
    n, r, p, salt, key = _parse(stored)
    return hmac.compare_digest(_derive(password, salt, n, r, p), key)


def _derive(password: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return hashlib.scrypt(
        password.encode("utf-8"), salt=salt, n=n, r=r, p=p, maxmem=_MAXMEM, dklen=KEY_BYTES
    )


def _parse(stored: str) -> tuple[int, int, int, bytes, bytes]:
    parts = stored.split("$")
    if len(parts) != 6 or parts[0] != SCHEME:
        raise ValueError("not a query-guard password hash (scrypt$n$r$p$salt$key)")
    n, r, p = (int(x) for x in parts[1:4])
    if n < 2 or n & (n - 1) or r < 1 or p < 1:
        raise ValueError("scrypt parameters out of range")
    return n, r, p, base64.b64decode(parts[4], validate=True), base64.b64decode(parts[5])


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


class UserDirectory:
    """The configured users; `authenticate` is the Bolt frontend's logon hook."""

    def __init__(self, users: Mapping[str, Any]) -> None:
        for name, stored in users.items():
            if not isinstance(stored, str):
                raise ConfigError(f"server.users.{name}", "must be a password hash string")
            try:
                _parse(stored)
            except ValueError as exc:
                raise ConfigError(
                    f"server.users.{name}",
                    f"{exc}; make one with `query-guard hash-password`",
                ) from exc
        self._users = dict(users)
        # Unknown users cost as much as known ones: nobody learns which names exist.
        self._decoy = hash_password(secrets.token_urlsafe(16))
        # Credentials that passed, as keyed digests (never the passwords): an HTTP client
        # sends them with every request, and each scrypt check costs tens of milliseconds.
        self._key = secrets.token_bytes(32)
        self._verified: OrderedDict[bytes, None] = OrderedDict()
        self._threads = concurrent.futures.ThreadPoolExecutor(CHECK_THREADS, "password-check")

    def __len__(self) -> int:
        return len(self._users)

    async def authenticate(self, auth: Mapping[str, Any]) -> bool:
        """Basic auth only (`scheme = "basic"`, principal + credentials)."""
        principal, credentials = auth.get("principal"), auth.get("credentials")
        if auth.get("scheme") != "basic" or not isinstance(principal, str):
            return False
        if not isinstance(credentials, str):
            return False
        stored = self._users.get(principal)
        digest = hmac.digest(self._key, f"{principal}\0{stored}\0{credentials}".encode(), "sha256")
        if digest in self._verified:
            self._verified.move_to_end(digest)
            return True
        loop = asyncio.get_running_loop()
        ok = await loop.run_in_executor(
            self._threads, verify_password, credentials, stored or self._decoy
        )
        if ok and stored is not None:
            self._verified[digest] = None
            if len(self._verified) > VERIFIED_CACHE:
                self._verified.popitem(last=False)
            return True
        return False


def logon_check(users: Mapping[str, Any], upstream: LogonCheck | None) -> LogonCheck | None:
    """The frontend's logon hook: `users` (when any) must accept the credentials, then the
    backend's own check (`upstream`, pass-through) when there is one."""
    if not users:
        return upstream
    directory = UserDirectory(users)
    if upstream is None:
        return directory.authenticate

    async def both(auth: dict[str, Any]) -> bool:
        if not await directory.authenticate(auth):
            return False
        accepted = upstream(auth)
        return bool(await accepted if inspect.isawaitable(accepted) else accepted)

    return both


def is_loopback(host: str) -> bool:
    """Is `host` (a listen address) reachable from this machine only?"""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def printable_url(url: str) -> str:
    """`url` as it may be printed or logged: a password replaced by `***` (the embedded
    database's generated one that `[server] workers` hands on, or a configured one)."""
    parts = urlsplit(url)
    if not parts.password:
        return url
    return parts._replace(
        netloc=f"{parts.username or ''}:***@{parts.netloc.rpartition('@')[2]}"
    ).geturl()
