"""The apiserver calls delegated authentication and authorization make: TokenReview and
SubjectAccessReview (as k8s.io/apiserver's webhook token authenticator and webhook authorizer send
them), and the client CA lookup in kube-system/extension-apiserver-authentication."""

from __future__ import annotations

import asyncio
import logging
import random
from collections.abc import Awaitable, Callable
from typing import Any

import orjson

from kubesched.api import ApiClient
from kubesched.api.errors import ApiConnectionError, ApiError
from kubesched.serving.auth import AccessReviewResult, Attributes, TokenReviewResult, User
from kubesched.serving.certs import FILE_REFRESH, CertificateError

log = logging.getLogger("kubesched")

TOKEN_REVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews"
ACCESS_REVIEWS = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
AUTH_CONFIGMAP = "/api/v1/namespaces/kube-system/configmaps/extension-apiserver-authentication"
REVIEW_TIMEOUT = 10.0  # DelegatingAuthorizationOptions.ClientTimeout, TokenRequestTimeout
# DefaultAuthWebhookRetryBackoff: 500 ms, x1.5, jitter 0.2, 5 steps; retried on what may pass.
RETRY_STEPS, RETRY_FIRST, RETRY_FACTOR, RETRY_JITTER = 5, 0.5, 1.5, 0.2


def backoff_delays(rng: random.Random) -> list[float]:
    """The waits between the attempts: wait.Backoff's, jittered up by at most 20 %."""
    return [RETRY_FIRST * RETRY_FACTOR ** i * (1 + RETRY_JITTER * rng.random()) for i in range(RETRY_STEPS - 1)]


def _retryable(status: int) -> bool:
    return status == 429 or status >= 500


def token_review_body(token: str) -> dict[str, Any]:
    return {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": {"token": token}}


def parse_token_review(body: bytes) -> TokenReviewResult:
    status = (orjson.loads(body) or {}).get("status") or {}
    user = status.get("user") or {}
    if not status.get("authenticated"):
        return TokenReviewResult(False, error=str(status.get("error") or ""))
    return TokenReviewResult(True, User(
        name=str(user.get("username", "")), uid=str(user.get("uid", "")),
        groups=tuple(user.get("groups") or ()),
        extra={k: tuple(v or ()) for k, v in (user.get("extra") or {}).items()}))


def access_review_body(attrs: Attributes) -> dict[str, Any]:
    spec: dict[str, Any] = {"nonResourceAttributes": {"path": attrs.path, "verb": attrs.verb},
                            "user": attrs.user.name, "groups": list(attrs.user.groups)}
    if attrs.user.uid:
        spec["uid"] = attrs.user.uid
    if attrs.user.extra:
        spec["extra"] = {k: list(v) for k, v in attrs.user.extra.items()}
    return {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec}


def parse_access_review(body: bytes) -> AccessReviewResult:
    status = (orjson.loads(body) or {}).get("status") or {}
    return AccessReviewResult(bool(status.get("allowed")), bool(status.get("denied")),
                              str(status.get("reason") or ""), str(status.get("evaluationError") or ""))


class Reviews:
    """Both reviews over one client (the --authentication-kubeconfig's or --authorization-kubeconfig's)."""

    def __init__(self, client: ApiClient, sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
                 rng: random.Random | None = None) -> None:
        self._client = client
        self._sleep = sleep
        self._rng = rng or random.Random()

    async def _create(self, path: str, body: dict[str, Any]) -> bytes:
        delays = backoff_delays(self._rng)
        for attempt in range(RETRY_STEPS):
            try:
                resp = await self._client.request("POST", path, body=body, request_timeout=REVIEW_TIMEOUT)
            except ApiConnectionError:
                if attempt == RETRY_STEPS - 1:
                    raise
            else:
                if resp.ok:
                    return resp.body
                if not _retryable(resp.status) or attempt == RETRY_STEPS - 1:
                    raise ApiError.from_response(resp.status, resp.body, method="POST", path=path)
            await self._sleep(delays[attempt])
        raise AssertionError("unreachable")

    async def token(self, token: str) -> TokenReviewResult:
        return parse_token_review(await self._create(TOKEN_REVIEWS, token_review_body(token)))

    async def access(self, attrs: Attributes) -> AccessReviewResult:
        return parse_access_review(await self._create(ACCESS_REVIEWS, access_review_body(attrs)))


CA_NAME = "client-ca::kube-system::extension-apiserver-authentication::client-ca-file"
# workqueue.DefaultTypedControllerRateLimiter's per-item backoff: 5 ms, doubling (to 1000 s, but
# the FILE_REFRESH poll queues the item again every minute, so a minute at most).
RETRY_BASE = 0.005


class ClientCAFromConfigMap:
    """dynamiccertificates.ConfigMapCAController: data["client-ca-file"] of
    kube-system/extension-apiserver-authentication, read now, again every FILE_REFRESH (the
    controller's informer sees a change sooner; its minute poll is what is kept here), and after a
    failure again soon, backing off. A change replaces the whole bundle (a CA taken out of it is no
    longer trusted); a read that fails, an empty key, a bundle that does not load, or the ConfigMap
    deleted leave the last good bundle (loadCABundle returns the error and keeps it)."""

    def __init__(self, read: Callable[[], Awaitable[bytes | None]], apply: Callable[[bytes, str], bool], *,
                 period: float = FILE_REFRESH, sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> None:
        self._read = read
        self._apply = apply
        self._period = period
        self._sleep = sleep
        self.failures = 0

    async def load_once(self) -> bool:
        """True when the bundle changed; raises ApiError, ApiConnectionError, ValueError,
        CertificateError."""
        ca = await self._read()
        if not ca:
            raise ValueError(f'missing content for CA bundle "{CA_NAME}"')
        return self._apply(ca, "the client CA of kube-system/extension-apiserver-authentication")

    async def run(self) -> None:
        while True:
            try:
                if await self.load_once():
                    log.info("loaded the client CA", extra={"bundle": CA_NAME})
                self.failures = 0
                delay = self._period
            except (ApiError, ApiConnectionError, ValueError, CertificateError) as exc:
                if self.failures == 0:
                    log.warning("cannot read the client CA from kube-system/extension-apiserver-authentication; "
                                "retrying (client certificates authenticate with the last one read, if any)",
                                extra={"detail": str(exc)})
                delay = min(RETRY_BASE * 2 ** self.failures, self._period)
                self.failures += 1
            await self._sleep(delay)


async def lookup_client_ca(client: ApiClient) -> bytes | None:
    """data["client-ca-file"] of kube-system/extension-apiserver-authentication; raises ApiError or
    ApiConnectionError when it cannot be read."""
    body = orjson.loads(await client.get(AUTH_CONFIGMAP))
    ca = (body.get("data") or {}).get("client-ca-file")
    return ca.encode() if ca else None
