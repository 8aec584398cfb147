"""Delegated authentication and authorization decisions, with the TokenReview and
SubjectAccessReview calls faked as plain functions and time faked: who a request is, what is
allowed without asking, what is cached and for how long, and what is never cached."""

from __future__ import annotations

import pytest

from kubesched.serving.auth import (
    ANONYMOUS_USER,
    AccessReviewResult,
    Attributes,
    Authenticator,
    Authorizer,
    Decision,
    TokenReviewResult,
    Unauthenticated,
    User,
    forbidden_message,
    path_matcher,
)
from kubesched.serving.reviews import access_review_body, parse_access_review, parse_token_review


class FakeClock:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


class FakeTokenReview:
    def __init__(self, answers: dict[str, TokenReviewResult]) -> None:
        self.answers = answers
        self.calls: list[str] = []
        self.fail = False

    async def __call__(self, token: str) -> TokenReviewResult:
        self.calls.append(token)
        if self.fail:
            raise ConnectionError("apiserver unreachable")
        return self.answers.get(token, TokenReviewResult(False, error="invalid bearer token"))


class FakeAccessReview:
    def __init__(self, allowed: set[tuple[str, str, str]]) -> None:
        self.allowed = allowed
        self.calls: list[Attributes] = []
        self.fail = False

    async def __call__(self, attrs: Attributes) -> AccessReviewResult:
        self.calls.append(attrs)
        if self.fail:
            raise ConnectionError("apiserver unreachable")
        return AccessReviewResult((attrs.user.name, attrs.verb, attrs.path) in self.allowed)


ALICE = User("alice", uid="u1", groups=("devs",))
GOOD = {"good": TokenReviewResult(True, ALICE), "shy": TokenReviewResult(False)}


@pytest.mark.parametrize(("cert", "header", "expected"), [
    pytest.param(None, None, ANONYMOUS_USER, id="no-credentials-anonymous"),
    pytest.param(("admin", ("system:masters",)), None, User("admin", groups=("system:masters", "system:authenticated")),
                 id="client-certificate-cn-and-orgs"),
    pytest.param(("admin", ()), "Bearer good", User("admin", groups=("system:authenticated",)),
                 id="certificate-before-token"),
    pytest.param(None, "Bearer good", User("alice", "u1", ("devs", "system:authenticated")), id="token"),
    pytest.param(None, "bearer good", User("alice", "u1", ("devs", "system:authenticated")), id="scheme-any-case"),
    pytest.param(None, "Basic Zm9vOmJhcg==", ANONYMOUS_USER, id="not-bearer-anonymous"),
])
async def test_who_the_request_is(cert: tuple[str, tuple[str, ...]] | None, header: str | None,
                                  expected: User) -> None:
    authn = Authenticator(FakeTokenReview(GOOD), clock=FakeClock())
    assert await authn.authenticate(cert, header) == expected


async def test_a_refused_token_is_401_not_anonymous() -> None:
    authn = Authenticator(FakeTokenReview(GOOD), clock=FakeClock())
    with pytest.raises(Unauthenticated, match="invalid bearer token"):
        await authn.authenticate(None, "Bearer forged")


async def test_token_answers_are_cached_for_the_ttl_errors_not() -> None:
    clock = FakeClock()
    review = FakeTokenReview(GOOD)
    authn = Authenticator(review, ttl=10, clock=clock)
    for _ in range(3):
        await authn.authenticate(None, "Bearer good")
        with pytest.raises(Unauthenticated):
            await authn.authenticate(None, "Bearer forged")
    assert review.calls == ["good", "forged"]
    clock.t += 10
    await authn.authenticate(None, "Bearer good")
    assert review.calls == ["good", "forged", "good"]
    review.fail = True
    with pytest.raises(Unauthenticated, match="token review failed"):
        await authn.authenticate(None, "Bearer other")
    review.fail = False
    with pytest.raises(Unauthenticated):
        await authn.authenticate(None, "Bearer other")  # asked again: the failure was not cached
    assert review.calls[-2:] == ["other", "other"]


async def test_without_a_token_reviewer_tokens_are_anonymous() -> None:
    assert await Authenticator(None).authenticate(None, "Bearer good") == ANONYMOUS_USER


@pytest.mark.parametrize(("paths", "path", "allowed"), [
    pytest.param(("/healthz", "/readyz", "/livez"), "/healthz", True, id="default-healthz"),
    pytest.param(("/healthz", "/readyz", "/livez"), "/healthz/ping", False, id="exact-not-prefix"),
    pytest.param(("/healthz", "/readyz", "/livez"), "/metrics", False, id="metrics-not-default"),
    pytest.param(("/healthz/*",), "/healthz/ping", True, id="trailing-star-prefix"),
    pytest.param(("/",), "/", True, id="root"),
    pytest.param((), "/healthz", False, id="cleared"),
])
def test_always_allowed_paths(paths: tuple[str, ...], path: str, allowed: bool) -> None:
    assert path_matcher(paths)(path) is allowed


def test_a_star_inside_a_path_is_refused() -> None:
    with pytest.raises(ValueError, match="only trailing"):
        path_matcher(["/a*/b"])


async def test_authorization_order_and_caching() -> None:
    clock = FakeClock()
    review = FakeAccessReview({("alice", "get", "/metrics")})
    authz = Authorizer(review, allow_ttl=10, deny_ttl=5, clock=clock)
    masters = User("root", groups=("system:masters",))
    assert (await authz.authorize(Attributes(masters, "get", "/metrics"))).decision is Decision.ALLOW
    assert (await authz.authorize(Attributes(ANONYMOUS_USER, "get", "/healthz"))).decision is Decision.ALLOW
    assert review.calls == []  # neither asked the apiserver
    for _ in range(2):
        assert (await authz.authorize(Attributes(ALICE, "get", "/metrics"))).decision is Decision.ALLOW
        assert (await authz.authorize(Attributes(ANONYMOUS_USER, "get", "/metrics"))).decision is Decision.NO_OPINION
    assert len(review.calls) == 2
    clock.t += 5  # the denial expired, the allowance not yet
    await authz.authorize(Attributes(ALICE, "get", "/metrics"))
    await authz.authorize(Attributes(ANONYMOUS_USER, "get", "/metrics"))
    assert [a.user.name for a in review.calls] == ["alice", "system:anonymous", "system:anonymous"]
    # the verb is part of the question
    assert (await authz.authorize(Attributes(ALICE, "post", "/metrics"))).decision is Decision.NO_OPINION


async def test_a_failed_review_raises_and_is_not_cached() -> None:
    review = FakeAccessReview({("alice", "get", "/metrics")})
    authz = Authorizer(review, clock=FakeClock())
    review.fail = True
    with pytest.raises(ConnectionError):
        await authz.authorize(Attributes(ALICE, "get", "/metrics"))
    review.fail = False
    assert (await authz.authorize(Attributes(ALICE, "get", "/metrics"))).decision is Decision.ALLOW


async def test_denied_and_no_opinion_reasons() -> None:
    async def deny(_: Attributes) -> AccessReviewResult:
        return AccessReviewResult(False, denied=True, reason="nope")

    async def shrug(_: Attributes) -> AccessReviewResult:
        return AccessReviewResult(False, reason="no rule")

    attrs = Attributes(ANONYMOUS_USER, "get", "/metrics")
    assert await Authorizer(deny).authorize(attrs) == (await Authorizer(deny).authorize(attrs))
    assert (await Authorizer(deny).authorize(attrs)).reason == "nope"
    assert (await Authorizer(shrug).authorize(attrs)).reason == "kubernetes.io/webhook: no rule"
    assert forbidden_message(attrs, "") == 'forbidden: User "system:anonymous" cannot get path "/metrics"'
    assert forbidden_message(attrs, "x") == 'forbidden: User "system:anonymous" cannot get path "/metrics": x'
    assert (await Authorizer(None).authorize(attrs)).decision is Decision.NO_OPINION


def test_review_bodies_as_the_apiserver_webhooks_send_and_answer_them() -> None:
    user = User("alice", "u1", ("devs",), {"scopes": ("a",)})
    assert access_review_body(Attributes(user, "get", "/metrics")) == {
        "apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
        "spec": {"nonResourceAttributes": {"path": "/metrics", "verb": "get"}, "user": "alice",
                 "groups": ["devs"], "uid": "u1", "extra": {"scopes": ["a"]}}}
    assert parse_access_review(b'{"status":{"allowed":true}}') == AccessReviewResult(True)
    assert parse_access_review(b'{"status":{}}') == AccessReviewResult(False)
    assert parse_token_review(
        b'{"status":{"authenticated":true,"user":{"username":"system:serviceaccount:ns:sa","uid":"9",'
        b'"groups":["system:serviceaccounts"],"extra":{"k":["v"]}}}}'
    ) == TokenReviewResult(True, User("system:serviceaccount:ns:sa", "9", ("system:serviceaccounts",), {"k": ("v",)}))
    assert parse_token_review(b'{"status":{"error":"bad"}}') == TokenReviewResult(False, error="bad")


class FakeClient:
    """ApiClient.request answering from a script: a status, or an exception to raise."""

    def __init__(self, script: list[int | Exception]) -> None:
        self.script = script
        self.calls = 0

    async def request(self, method: str, path: str, **_: object) -> object:
        from kubesched.api.client import Response

        step = self.script[min(self.calls, len(self.script) - 1)]
        self.calls += 1
        if isinstance(step, Exception):
            raise step
        return Response(step, b'{"status":{"allowed":true}}' if step == 201 else b'{"message":"no"}')


@pytest.mark.parametrize(("script", "calls", "outcome"), [
    pytest.param([201], 1, "allowed", id="first-time"),
    pytest.param([503, 429, 201], 3, "allowed", id="retried-5xx-429"),
    pytest.param(["conn", 201], 2, "allowed", id="retried-connection"),
    pytest.param([403], 1, "ApiError", id="4xx-not-retried"),
    pytest.param([500], 5, "ApiError", id="gives-up-after-5"),
])
async def test_reviews_retry_as_the_webhooks_do(script: list[int | str], calls: int, outcome: str) -> None:
    import random

    from kubesched.api.errors import ApiConnectionError, ApiError
    from kubesched.serving.reviews import Reviews, backoff_delays

    client = FakeClient([ApiConnectionError("refused") if s == "conn" else s for s in script])  # type: ignore[misc]
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)

    reviews = Reviews(client, sleep=sleep, rng=random.Random(1))  # type: ignore[arg-type]
    try:
        result = await reviews.access(Attributes(ALICE, "get", "/metrics"))
        got = "allowed" if result.allowed else "denied"
    except ApiError:
        got = "ApiError"
    assert (client.calls, got) == (calls, outcome)
    assert slept == backoff_delays(random.Random(1))[:calls - 1]
    assert all(0.5 * 1.5 ** i <= d <= 0.5 * 1.5 ** i * 1.2 for i, d in enumerate(backoff_delays(random.Random(2))))
