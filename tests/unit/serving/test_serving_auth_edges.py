"""Authentication edge cases decided as k8s.io/apiserver decides them: a client certificate without
a CN authenticates nobody (x509.CommonNameUserConversion answers "no user", so the next
authenticator, then anonymous, decides), and a TokenReview that answers `authenticated: false`
without an error is the bearer token authenticator's "invalid bearer token", a 401."""

from __future__ import annotations

import pytest

from kubesched.serving.auth import ANONYMOUS_USER, Authenticator, TokenReviewResult, Unauthenticated, User

ALICE = User("alice", uid="u1", groups=("devs",))


async def review(token: str) -> TokenReviewResult:
    if token == "good":
        return TokenReviewResult(True, ALICE)
    if token == "forged":
        return TokenReviewResult(False, error="invalid token signature")
    return TokenReviewResult(False)  # authenticated: false, no status.error


async def test_an_empty_cn_certificate_is_no_user_so_anonymous() -> None:
    assert await Authenticator(review).authenticate(("", ("system:masters",)), None) == ANONYMOUS_USER


async def test_an_empty_cn_certificate_leaves_the_token_to_decide() -> None:
    authn = Authenticator(review)
    assert await authn.authenticate(("", ("system:masters",)), "Bearer good") == User(
        "alice", "u1", ("devs", "system:authenticated"))
    with pytest.raises(Unauthenticated):
        await authn.authenticate(("", ("system:masters",)), "Bearer forged")


async def test_an_empty_cn_certificate_without_anonymous_is_401() -> None:
    with pytest.raises(Unauthenticated):
        await Authenticator(review, anonymous=False).authenticate(("", ()), None)


async def test_a_token_refused_without_an_error_is_401_invalid_bearer_token() -> None:
    with pytest.raises(Unauthenticated, match=r"^invalid bearer token$"):
        await Authenticator(review).authenticate(None, "Bearer shy")


async def test_a_token_refused_with_an_error_is_401_with_it() -> None:
    with pytest.raises(Unauthenticated, match="invalid token signature"):
        await Authenticator(review).authenticate(None, "Bearer forged")
