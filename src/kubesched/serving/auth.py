"""Delegated authentication and authorization of the secure port, decided as kube-scheduler's
delegating authenticator and authorizer decide (k8s.io/apiserver authenticatorfactory and
authorizerfactory), with the calls to the apiserver injected so the logic is tested without one.

Authentication, first that answers: a client certificate verified against the client CA (user
= CN, groups = O; one without a CN is no user, and the next decides), else a bearer token checked
by a TokenReview (answers cached 10 s, errors not cached), else anonymous (system:anonymous, group
system:unauthenticated). A token the review does not authenticate, with or without an error, or a
review that fails, is a 401 — never a fall back to anonymous.

Authorization, first that decides: the always-allowed groups (system:masters), the always-allowed
paths (/healthz, /readyz, /livez; a trailing * is a prefix), then a SubjectAccessReview of the
non-resource path and the lower-cased HTTP verb (allowed answers cached 10 s, denied 10 s, errors
not cached). No decision is a 403 whose message carries the reasons, as kube-scheduler's.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Generic, TypeVar

ANONYMOUS = "system:anonymous"
UNAUTHENTICATED = "system:unauthenticated"
AUTHENTICATED = "system:authenticated"
DEFAULT_ALWAYS_ALLOW_PATHS = ("/healthz", "/readyz", "/livez")
DEFAULT_ALWAYS_ALLOW_GROUPS = ("system:masters",)
DEFAULT_TTL = 10.0


@dataclass(frozen=True)
class User:
    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


ANONYMOUS_USER = User(ANONYMOUS, groups=(UNAUTHENTICATED,))


@dataclass(frozen=True)
class TokenReviewResult:
    """status of a TokenReview: authenticated and who, or why not (error may be empty)."""

    authenticated: bool
    user: User | None = None
    error: str = ""


class Decision(Enum):
    ALLOW = "allow"
    DENY = "deny"
    NO_OPINION = "no opinion"


@dataclass(frozen=True)
class AccessReviewResult:
    """status of a SubjectAccessReview."""

    allowed: bool
    denied: bool = False
    reason: str = ""
    evaluation_error: str = ""


@dataclass(frozen=True)
class Attributes:
    """A non-resource request: all the secure port serves."""

    user: User
    verb: str
    path: str


class Unauthenticated(Exception):
    """The request's credentials were refused: a 401."""


TokenReviewer = Callable[[str], Awaitable[TokenReviewResult]]
AccessReviewer = Callable[[Attributes], Awaitable[AccessReviewResult]]


K = TypeVar("K")
V = TypeVar("V")


class _TTLCache(Generic[K, V]):
    """Entries that expire; bounded, the oldest dropped first, so a flood of distinct tokens cannot
    grow it without end."""

    def __init__(self, clock: Callable[[], float], max_entries: int = 4096) -> None:
        self._clock = clock
        self._max = max_entries
        self._entries: dict[K, tuple[float, V]] = {}

    def get(self, key: K) -> V | None:
        hit = self._entries.get(key)
        if hit is None:
            return None
        if hit[0] <= self._clock():
            del self._entries[key]
            return None
        return hit[1]

    def put(self, key: K, value: V, ttl: float) -> None:
        if ttl <= 0:
            return
        if len(self._entries) >= self._max:
            self._entries.pop(next(iter(self._entries)))
        self._entries[key] = (self._clock() + ttl, value)


def with_authenticated_group(user: User) -> User:
    """group.NewAuthenticatedGroupAdder: every authenticated user is in system:authenticated."""
    if user.name == ANONYMOUS or AUTHENTICATED in user.groups or UNAUTHENTICATED in user.groups:
        return user
    return User(user.name, user.uid, (*user.groups, AUTHENTICATED), user.extra)


class Authenticator:
    def __init__(self, review: TokenReviewer | None, *, ttl: float = DEFAULT_TTL, anonymous: bool = True,
                 clock: Callable[[], float] = time.monotonic) -> None:
        """`review` None: no authentication kubeconfig, so every token is refused (as an
        authenticator that never answers would leave it)."""
        self._review = review
        self._ttl = ttl
        self._anonymous = anonymous
        self._cache: _TTLCache[bytes, TokenReviewResult] = _TTLCache(clock)

    async def authenticate(self, client_cert_subject: tuple[str, tuple[str, ...]] | None,
                           authorization: str | None) -> User:
        """The request's user; raises Unauthenticated. `client_cert_subject` is (CN, Os) of a
        certificate the TLS layer verified against the client CA."""
        if client_cert_subject is not None and client_cert_subject[0]:
            # x509.CommonNameUserConversion: a certificate without a CN is no user (not an error),
            # and the next authenticator decides.
            cn, orgs = client_cert_subject
            return with_authenticated_group(User(cn, groups=orgs))
        token = _bearer(authorization)
        if token is not None:
            if self._review is not None:
                result = await self._token(token)
                if result.authenticated and result.user is not None:
                    return with_authenticated_group(result.user)
                # bearertoken.Authenticator: a token not authenticated is an error, the review's or
                # "invalid bearer token", and the union fails on it (NewFailOnError), never anonymous.
                raise Unauthenticated(result.error or "invalid bearer token")
            if not self._anonymous:
                raise Unauthenticated("token authentication is not configured")
        if self._anonymous:
            return ANONYMOUS_USER
        raise Unauthenticated("no credentials")

    async def _token(self, token: str) -> TokenReviewResult:
        key = hashlib.sha256(token.encode()).digest()  # the token itself is never kept
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        try:
            result = await self._review(token)  # type: ignore[misc]
        except Exception as exc:  # a failed review is an error, not cached: the next request asks again
            raise Unauthenticated(f"token review failed: {exc}") from exc
        self._cache.put(key, result, self._ttl)
        return result


def _bearer(authorization: str | None) -> str | None:
    """The token of an `Authorization: Bearer <token>` header (bearertoken.Authenticator)."""
    if not authorization:
        return None
    parts = authorization.strip().split(" ")
    if len(parts) < 2 or parts[0].lower() != "bearer":
        return None
    token = parts[1]
    return token or None


def path_matcher(always_allow_paths: Sequence[str]) -> Callable[[str], bool]:
    """path.NewAuthorizer's matching; raises ValueError for a * that is not trailing."""
    exact: set[str] = set()
    prefixes: list[str] = []
    for p in always_allow_paths:
        p = p.removeprefix("/")
        if not p:
            exact.add(p)
            continue
        if "*" in p[:-1]:
            raise ValueError(f'only trailing * allowed in "{p}"')
        if p.endswith("*"):
            prefixes.append(p[:-1])
        else:
            exact.add(p)

    def matches(path: str) -> bool:
        p = path.removeprefix("/")
        return p in exact or any(p.startswith(prefix) for prefix in prefixes)

    return matches


@dataclass(frozen=True)
class Verdict:
    decision: Decision
    reason: str = ""


class Authorizer:
    def __init__(self, review: AccessReviewer | None, *,
                 always_allow_paths: Sequence[str] = DEFAULT_ALWAYS_ALLOW_PATHS,
                 always_allow_groups: Sequence[str] = DEFAULT_ALWAYS_ALLOW_GROUPS,
                 allow_ttl: float = DEFAULT_TTL, deny_ttl: float = DEFAULT_TTL,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._review = review
        self._paths = path_matcher(always_allow_paths)
        self._groups = frozenset(always_allow_groups)
        self._allow_ttl = allow_ttl
        self._deny_ttl = deny_ttl
        self._cache: _TTLCache[tuple[object, ...], AccessReviewResult] = _TTLCache(clock)

    async def authorize(self, attrs: Attributes) -> Verdict:
        """The union's verdict; raises the review's exception when it failed and nothing else
        allowed (the server answers 500 then, as kube-scheduler's)."""
        if self._groups.intersection(attrs.user.groups):
            return Verdict(Decision.ALLOW)
        if self._paths(attrs.path):
            return Verdict(Decision.ALLOW)
        if self._review is None:
            return Verdict(Decision.NO_OPINION)
        key = (attrs.user.name, attrs.user.uid, attrs.user.groups,
               tuple(sorted((k, tuple(v)) for k, v in attrs.user.extra.items())), attrs.verb, attrs.path)
        result = self._cache.get(key)
        if result is None:
            result = await self._review(attrs)  # a failed call raises, and is not cached
            self._cache.put(key, result, self._allow_ttl if result.allowed else self._deny_ttl)
        reason = f"kubernetes.io/webhook: {result.reason}" if result.reason else ""
        if result.allowed:
            return Verdict(Decision.ALLOW, result.reason)
        if result.denied:
            return Verdict(Decision.DENY, result.reason)
        return Verdict(Decision.NO_OPINION, reason)


def forbidden_message(attrs: Attributes, reason: str) -> str:
    """responsewriters.ForbiddenStatusError's message for a non-resource request."""
    msg = f'User "{attrs.user.name}" cannot {attrs.verb} path "{attrs.path}"'
    msg = msg.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return f"forbidden: {msg}: {reason}" if reason else f"forbidden: {msg}"
