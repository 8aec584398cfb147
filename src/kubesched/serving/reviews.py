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


async def lookup_client_ca(client: ApiClient) -> bytes | None:
    """data["client-ca-file"] of kube-system/extension-apiserver-authentication; raises ApiError or
    ApiConnectionError when it cannot be read."""
    body = orjson.loads(await client.get(AUTH_CONFIGMAP))
    ca = (body.get("data") or {}).get("client-ca-file")
    return ca.encode() if ca else None
