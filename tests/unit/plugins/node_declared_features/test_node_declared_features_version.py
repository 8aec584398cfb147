"""The version comparison NodeDeclaredFeatures uses for MaxVersion (apimachinery util/version
Parse and GreaterThan)."""

from __future__ import annotations

import pytest

from kubesched.plugins.node_declared_features.version import Version, parse


@pytest.mark.parametrize(("text", "want"), [
    pytest.param("v1.37.2", Version((1, 37, 2)), id="leading-v"),
    pytest.param("1.35.0-alpha.2.39+049eafd34dfbd2", Version((1, 35, 0), True, "alpha.2.39", "049eafd34dfbd2"),
                 id="pre-release-and-build"),
    pytest.param("1.37", Version((1, 37), semver=False), id="generic"),
    pytest.param("1.37.2.4", Version((1, 37, 2, 4), semver=False), id="generic-four-components"),
    # Not semantic (a zero-prefixed numeric identifier), so read as generic, its extra dropped.
    pytest.param("1.2.3-alpha.01", Version((1, 2, 3), semver=False), id="bad-pre-release-read-generic"),
])
def test_parse(text: str, want: Version) -> None:
    assert parse(text) == want


@pytest.mark.parametrize(("text", "error"), [
    pytest.param("", "could not parse", id="empty"),
    pytest.param("one", "could not parse", id="no-number"),
    pytest.param("v", "could not parse", id="v-only"),
    pytest.param("01.2.3", "illegal zero-prefixed version component", id="zero-prefixed"),
    pytest.param("1", "illegal version string", id="one-component"),
])
def test_parse_refuses(text: str, error: str) -> None:
    with pytest.raises(ValueError, match=error):
        parse(text)


@pytest.mark.parametrize(("a", "b", "want"), [
    pytest.param("1.31.0", "1.30.0", 1, id="minor"),
    pytest.param("1.30.0", "1.30.0", 0, id="equal"),
    pytest.param("1.30.1", "1.30.10", -1, id="numeric-not-lexical"),
    pytest.param("1.39.0-alpha.2.39+049eafd34dfbd2", "1.38.0", 1, id="pre-release-of-a-later-minor"),
    pytest.param("1.38.0-alpha.1", "1.38.0", -1, id="pre-release-before-release"),
    pytest.param("0.0.0-alpha.2.39+049eafd34dfbd2", "1.30.0", -1, id="zero-pre-release"),
    pytest.param("1.0.0-alpha.2", "1.0.0-alpha.10", -1, id="numeric-identifiers"),
    pytest.param("1.0.0-beta", "1.0.0-alpha.1", 1, id="alphanumeric-identifiers"),
    pytest.param("1.0.0-alpha.1", "1.0.0-alpha", 1, id="more-identifiers"),
    pytest.param("1.0.0+a", "1.0.0+b", 0, id="build-metadata-ignored"),
    pytest.param("1.37", "1.37.0", 0, id="generic-missing-zero"),
    pytest.param("1.37", "1.37.0-alpha.1", 0, id="generic-ignores-pre-release"),
    pytest.param("1.37.0.1", "1.37.0", 1, id="extra-non-zero-component"),
])
def test_compare(a: str, b: str, want: int) -> None:
    assert parse(a).compare(parse(b)) == want
    assert parse(b).compare(parse(a)) == -want
    assert parse(a).greater_than(parse(b)) is (want == 1)
