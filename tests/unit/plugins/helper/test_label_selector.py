"""The label-selector helper against apimachinery v0.37.2: metav1.LabelSelectorAsSelector
(helpers_test.go TestLabelSelectorAsSelector), labels.NewRequirement (selector_test.go
TestRequirementConstructor: its keys, values and error fields, here with the full messages), the
Requirement matches (TestRequirementSelectorMatching) and Selector.String (TestToString).

The expected messages are those apimachinery v0.37.2 prints for the same selectors: the field path
and value of each case are the ones its tests name, the detail texts are content.IsLabelKey /
IsLabelValue / RegexError / MaxLenError, checked by hand against that source, and every message of
REJECTED is, word for word, what a `go run` of metav1.LabelSelectorAsSelector (apimachinery v0.37.2,
Go 1.26) prints for the same selector (22 of 22 alike, 2026-12-08)."""

from __future__ import annotations

import pytest

from kubesched.model.objects import LabelSelector, LabelSelectorRequirement
from kubesched.plugins.helper.label_selector import (
    EQUALS,
    EVERYTHING,
    NOTHING,
    Requirement,
    Selector,
    SelectorError,
    go_json_strings,
    go_quote,
    new_requirement,
    parse,
    parse_dict,
    parse_lenient,
)

LONG = "a" * 254
KEY_REGEX = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
             "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
             "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
VALUE_REGEX = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
               "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
               "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
SUBDOMAIN_REGEX = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
                   "'.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used "
                   "for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")


def ex(key: str, op: str, *values: str) -> LabelSelectorRequirement:
    return LabelSelectorRequirement(key=key, operator=op, values=list(values))


def exprs(*items: LabelSelectorRequirement) -> LabelSelector:
    return LabelSelector(match_expressions=list(items))


PARSED = [
    pytest.param(None, "", False, id="nil-selects-nothing"),
    pytest.param(LabelSelector(), "", True, id="empty-selects-everything"),
    pytest.param(LabelSelector(match_labels={"foo": "bar"}), "foo=bar", False, id="match-labels"),
    pytest.param(exprs(ex("baz", "In", "qux", "norf")), "baz in (norf,qux)", False, id="match-expressions"),
    pytest.param(LabelSelector(match_labels={"foo": "bar"}, match_expressions=[ex("baz", "In", "qux", "norf")]),
                 "baz in (norf,qux),foo=bar", False, id="both-sorted-by-key"),
    pytest.param(LabelSelector(match_labels={"b": "1", "a": "2"},
                               match_expressions=[ex("c", "Exists"), ex("a", "NotIn", "x", "y"),
                                                  ex("b", "DoesNotExist")]),
                 "a=2,a notin (x,y),b=1,!b,c", False, id="sorted-stably-labels-first"),
    pytest.param(LabelSelector(match_labels={"a": ""}), "a=", False, id="empty-value-is-valid"),
    pytest.param(exprs(ex("x3", "In", "foo")), "x3 in (foo)", False, id="in-one-value"),
    pytest.param(exprs(ex("x4", "NotIn", "foo")), "x4 notin (foo)", False, id="notin-one-value"),
    pytest.param(exprs(ex("x6", "Exists")), "x6", False, id="exists"),
    pytest.param(exprs(ex("x7", "DoesNotExist")), "!x7", False, id="does-not-exist"),
    pytest.param(exprs(ex("example.com/MyName", "Exists")), "example.com/MyName", False, id="prefixed-key"),
    pytest.param(exprs(ex("p/" + "a" * 63, "Exists")), "p/" + "a" * 63, False, id="name-of-63"),
    pytest.param(LabelSelector(match_labels={"k": "v" * 63}), "k=" + "v" * 63, False, id="value-of-63"),
]


@pytest.mark.parametrize(("selector", "query", "empty"), PARSED)
def test_parse(selector: LabelSelector | None, query: str, empty: bool) -> None:
    parsed = parse(selector)
    assert parsed.query() == query
    assert parsed.empty() is empty
    assert parsed.nothing is (selector is None)


REJECTED = [
    pytest.param(exprs(ex("baz", "Exists", "qux", "norf")),
                 'values: Invalid value: ["qux","norf"]: values set must be empty for exists and does not exist',
                 id="exists-with-values"),
    pytest.param(exprs(ex("x1", "In")),
                 "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty",
                 id="x1-in-without-values"),
    pytest.param(exprs(ex("x2", "NotIn")),
                 "values: Invalid value: null: for 'in', 'notin' operators, values set can't be empty",
                 id="x2-notin-without-values"),
    pytest.param(exprs(ex("x8", "Exists", "foo")),
                 'values: Invalid value: ["foo"]: values set must be empty for exists and does not exist',
                 id="x8-exists-with-a-value"),
    pytest.param(exprs(ex("x", "Gt", "1")), '"Gt" is not a valid label selector operator', id="gt-is-not-metav1"),
    pytest.param(exprs(ex("x18", "unsupportedOp")), '"unsupportedOp" is not a valid label selector operator',
                 id="x18-unsupported-operator"),
    pytest.param(exprs(ex(LONG, "Exists")), f'key: Invalid value: "{LONG}": name part must be no more than 63 bytes',
                 id="key-of-254"),
    pytest.param(LabelSelector(match_labels={"x16": LONG}),
                 f'values[0][x16]: Invalid value: "{LONG}": must be no more than 63 bytes', id="x16-value-of-254"),
    pytest.param(LabelSelector(match_labels={"x17": "a b"}), f'values[0][x17]: Invalid value: "a b": {VALUE_REGEX}',
                 id="x17-value-with-space"),
    pytest.param(LabelSelector(match_labels={"a b": "c"}), f'key: Invalid value: "a b": name part {KEY_REGEX}',
                 id="match-labels-key-checked"),
    pytest.param(exprs(ex("-a", "In", "b c", "-")),
                 f'[key: Invalid value: "-a": name part {KEY_REGEX}, values[0][-a]: Invalid value: "b c": '
                 f'{VALUE_REGEX}, values[1][-a]: Invalid value: "-": {VALUE_REGEX}]', id="several-errors-aggregated"),
    pytest.param(exprs(ex("/a", "Exists")), 'key: Invalid value: "/a": prefix part must be non-empty',
                 id="empty-prefix"),
    pytest.param(exprs(ex("Example.com/a", "Exists")),
                 f'key: Invalid value: "Example.com/a": prefix part {SUBDOMAIN_REGEX}', id="uppercase-prefix"),
    pytest.param(exprs(ex(LONG + "/b", "Exists")),
                 f'key: Invalid value: "{LONG}/b": prefix part must be no more than 253 bytes', id="prefix-of-254"),
    pytest.param(exprs(ex("a/b/c", "Exists")),
                 f'key: Invalid value: "a/b/c": a valid label key {KEY_REGEX} with an optional DNS subdomain prefix '
                 "and '/' (e.g. 'example.com/MyName')", id="two-slashes"),
    pytest.param(exprs(ex("example.com/", "Exists")),
                 f'key: Invalid value: "example.com/": name part must be non-empty; name part {KEY_REGEX}',
                 id="empty-name"),
    pytest.param(exprs(ex("", "Exists")), f'key: Invalid value: "": name part must be non-empty; name part {KEY_REGEX}',
                 id="empty-key"),
    pytest.param(exprs(ex("p/" + "a" * 64, "Exists")),
                 f'key: Invalid value: "p/{"a" * 64}": name part must be no more than 63 bytes', id="name-of-64"),
    pytest.param(exprs(ex("k", "DoesNotExist", "a b")),
                 '[values: Invalid value: ["a b"]: values set must be empty for exists and does not exist, '
                 f'values[0][k]: Invalid value: "a b": {VALUE_REGEX}]', id="count-and-value-errors"),
    pytest.param(exprs(ex("k", "In", 'a"b')), f'values[0][k]: Invalid value: "a\\"b": {VALUE_REGEX}',
                 id="value-quoted-as-go"),
    pytest.param(exprs(ex("k", "In", "é" * 32)), f'values[0][k]: Invalid value: "{"é" * 32}": must be no more than '
                 f"63 bytes; {VALUE_REGEX}", id="length-in-bytes"),
    pytest.param(exprs(ex("ok", "Exists"), ex("k", "Bad")), '"Bad" is not a valid label selector operator',
                 id="operator-after-a-valid-requirement"),
]


@pytest.mark.parametrize(("selector", "message"), REJECTED)
def test_rejected(selector: LabelSelector, message: str) -> None:
    with pytest.raises(SelectorError) as err:
        parse(selector)
    assert str(err.value) == message
    assert parse_lenient(selector) is None


MATCHES = [
    pytest.param(Requirement("x", EQUALS, frozenset(("a",))), {"x": "a"}, True, id="equals"),
    pytest.param(Requirement("x", EQUALS, frozenset(("a",))), {"x": "b"}, False, id="equals-other-value"),
    pytest.param(Requirement("x", EQUALS, frozenset(("a",))), {}, False, id="equals-missing"),
    pytest.param(Requirement("x", "In", frozenset(("a", "b"))), {"x": "b"}, True, id="in"),
    pytest.param(Requirement("x", "In", frozenset(("a",))), {"y": "a"}, False, id="in-missing"),
    pytest.param(Requirement("x", "NotIn", frozenset(("a",))), {}, True, id="notin-missing"),
    pytest.param(Requirement("x", "NotIn", frozenset(("a",))), {"x": "a"}, False, id="notin-listed"),
    pytest.param(Requirement("x", "NotIn", frozenset(("a",))), {"x": "b"}, True, id="notin-other"),
    pytest.param(Requirement("x", "Exists"), {"x": ""}, True, id="exists-empty-value"),
    pytest.param(Requirement("x", "Exists"), {}, False, id="exists-missing"),
    pytest.param(Requirement("x", "DoesNotExist"), {}, True, id="does-not-exist"),
    pytest.param(Requirement("x", "DoesNotExist"), {"x": ""}, False, id="does-not-exist-present"),
]


@pytest.mark.parametrize(("req", "labels", "want"), MATCHES)
def test_requirement_matches(req: Requirement, labels: dict[str, str], want: bool) -> None:
    assert req.matches(labels) is want


def test_nothing_and_everything() -> None:
    assert not NOTHING.matches({})
    assert not NOTHING.empty()  # nothingSelector.Empty() is false
    assert EVERYTHING.matches({"a": "b"})
    assert EVERYTHING.empty()
    assert parse(None) is NOTHING
    assert parse(LabelSelector()) is EVERYTHING


def test_with_labels_merges_sorted_and_keeps_nothing() -> None:
    merged = parse(exprs(ex("z", "Exists"))).with_labels({"b": "2", "a": "1"})
    assert merged.query() == "a=1,b=2,z"
    assert NOTHING.with_labels({"a": "1"}) is NOTHING
    assert EVERYTHING.with_labels({"a": "1"}).matches({"a": "1"})


def test_and() -> None:
    both = parse(LabelSelector(match_labels={"b": "1"})).and_(parse(LabelSelector(match_labels={"a": "2"})))
    assert both.query() == "a=2,b=1"
    assert EVERYTHING.and_(NOTHING) is NOTHING


def test_equal_selectors_hash_alike_whatever_the_order() -> None:
    one = parse(exprs(ex("b", "Exists"), ex("a", "In", "x", "y")))
    two = parse(exprs(ex("a", "In", "y", "x"), ex("b", "Exists")))
    assert one == two
    assert hash(one) == hash(two)
    assert len({one, two}) == 1


def test_set_pairs_are_equals_and_in() -> None:
    parsed = parse(LabelSelector(match_labels={"a": "1"}, match_expressions=[ex("b", "In", "2", "3"),
                                                                           ex("c", "NotIn", "4")]))
    assert parsed.set_pairs() == (("a", frozenset(("1",))), ("b", frozenset(("2", "3"))))


def test_parse_dict() -> None:
    raw = {"matchLabels": {"tier": "batch"}, "matchExpressions": [{"key": "zone", "operator": "In",
                                                                   "values": ["b", "a"]}]}
    assert parse_dict(raw) == parse(LabelSelector(match_labels={"tier": "batch"},
                                                  match_expressions=[ex("zone", "In", "b", "a")]))
    assert parse_dict(raw).query() == "tier=batch,zone in (a,b)"
    assert parse_dict({}) is EVERYTHING


def test_selector_is_slotted() -> None:
    assert not hasattr(Selector(), "__dict__")
    assert not hasattr(Requirement("a", "Exists"), "__dict__")


# The quoted texts from 3 on are what Go 1.26's strconv.Quote prints for the same strings (a `go run`
# of `fmt.Printf("%s", strconv.Quote(s))`): `"a b"`, `"\x7f"`, `"\u0080"`, `"\u009f"`, `"\u00a0"`,
# `"\u0378"`, `"\u2028"`, `"\uffff"`, `"𐀀"`, `"\U000e0001"`, `"😀"`, `"\U0010ffff"`: a rune strconv.IsPrint
# does not take is escaped as \x below 0x80, \u below 0x10000 and \U above, the space is printed.
@pytest.mark.parametrize(("text", "quoted"), [
    pytest.param("a", '"a"', id="plain"),
    pytest.param('a"b\\c', '"a\\"b\\\\c"', id="quote-and-backslash"),
    pytest.param("a\nb\x01", '"a\\nb\\x01"', id="control"),
    pytest.param("é", '"é"', id="printable-unicode"),
    pytest.param("a b", '"a b"', id="space-printed"),
    pytest.param("\x7f", '"\\x7f"', id="DEL-the-last-x-escape"),
    pytest.param("\u0080", '"\\u0080"', id="U+0080-the-first-u-escape"),
    pytest.param("\u009f", '"\\u009f"', id="C1-control"),
    pytest.param("\u00a0", '"\\u00a0"', id="no-break-space"),
    pytest.param("\u0378", '"\\u0378"', id="unassigned"),
    pytest.param("\u2028", '"\\u2028"', id="line-separator"),
    pytest.param("\uffff", '"\\uffff"', id="U+FFFF-the-last-u-escape"),
    pytest.param("\U00010000", '"\U00010000"', id="U+10000-printable"),
    pytest.param("\U000e0001", '"\\U000e0001"', id="language-tag-a-U-escape"),
    pytest.param("\U0001f600", '"\U0001f600"', id="emoji-printable"),
    pytest.param("\U0010ffff", '"\\U0010ffff"', id="last-code-point"),
])
def test_go_quote(text: str, quoted: str) -> None:
    assert go_quote(text) == quoted


@pytest.mark.parametrize(("values", "encoded"), [
    pytest.param([], "null", id="nil"),
    pytest.param(["a", "b"], '["a","b"]', id="two"),
    pytest.param(["<&>"], '["\\u003c\\u0026\\u003e"]', id="html-escaped"),
    # What Go 1.26's json.Marshal prints for the same []string (a `go run`): `["é"]`, `["\u2028"]`,
    # `["\u2029"]`, `["a\u2028b\u2029c"]`, the no-break space and DEL raw (`["<U+00A0>","<U+007F>"]`),
    # `["\u0001\n\t\b\f\"\\/"]`: UTF-8 as it is, but U+2028 and U+2029 escaped.
    pytest.param(["é"], '["é"]', id="utf8-not-escaped"),
    pytest.param(["\u2028"], '["\\u2028"]', id="line-separator-escaped"),
    pytest.param(["\u2029"], '["\\u2029"]', id="paragraph-separator-escaped"),
    pytest.param(["a\u2028b\u2029c"], '["a\\u2028b\\u2029c"]', id="separators-inside"),
    pytest.param(["\u00a0", "\x7f"], '["\u00a0","\x7f"]', id="nbsp-and-DEL-raw"),
    pytest.param(["\x01\n\t\b\f\"\\/"], '["\\u0001\\n\\t\\b\\f\\"\\\\/"]', id="controls"),
])
def test_go_json_strings(values: list[str], encoded: str) -> None:
    assert go_json_strings(values) == encoded


# labels.NewRequirement with selection.Equals, which parse only builds with one value (a matchLabels
# pair). The messages are what apimachinery v0.37.2 prints (a `go run` of
# `labels.NewRequirement("x5", selection.Equals, vals)`); the first is TestRequirementConstructor's x5
# (Field "values", BadValue ["bar","foo"]).
@pytest.mark.parametrize(("values", "message"), [
    pytest.param(("bar", "foo"), 'values: Invalid value: ["bar","foo"]: exact-match compatibility requires one single '
                 "value", id="x5-equals-with-two-values"),
    pytest.param((), "values: Invalid value: null: exact-match compatibility requires one single value",
                 id="equals-without-values"),
    pytest.param(("é", "\u2028"), '[values: Invalid value: ["é","\\u2028"]: exact-match compatibility requires one '
                 f'single value, values[0][x5]: Invalid value: "é": {VALUE_REGEX}, values[1][x5]: Invalid value: '
                 f'"\\u2028": {VALUE_REGEX}]', id="equals-with-two-invalid-values"),
])
def test_equals_requirement_needs_one_value(values: tuple[str, ...], message: str) -> None:
    with pytest.raises(SelectorError) as err:
        new_requirement("x5", EQUALS, values)
    assert str(err.value) == message
    assert new_requirement("x5", EQUALS, ("foo",)) == Requirement("x5", EQUALS, frozenset(("foo",)))
