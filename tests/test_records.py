"""edge.records: typed records checked at the boundary (configuration, tool arguments, updates)."""

import enum
from typing import Annotated, Any, Literal

import pytest

from edge.records import After, Before, Field, Invalid, Issue, Record, Secret, Tagged, validator

# -- helpers ----------------------------------------------------------------------------------------


def issues_of(cls: type[Record], data: Any) -> list[Issue]:
    with pytest.raises(Invalid) as caught:
        cls.parse(data)
    assert caught.value.issues, "Invalid without issues"
    return caught.value.issues


def only_issue(cls: type[Record], data: Any) -> Issue:
    issues = issues_of(cls, data)
    assert len(issues) == 1, issues
    return issues[0]


def lowercase_name(value: str) -> str:
    if not value.isidentifier() or value != value.lower():
        raise ValueError(f"names are lower-case letters, digits and _ (got {value!r})")
    return value


Name = Annotated[str, After(lowercase_name)]


class Color(str, enum.Enum):
    RED = "red"
    GREEN = "green"


# -- the records the tests use --------------------------------------------------------------------------


class Scalars(Record):
    text: str = "t"
    count: int = 0
    ratio: float = 0.0
    flag: bool = False
    nothing: None = None
    anything: Any = None


class StrictScalars(Record, strict=True):
    count: int = 0
    ratio: float = 0.0
    flag: bool = False
    level: Literal[0, 1, 2] = 0


class Choices(Record):
    mode: Literal["input", "output"] = "input"
    level: Literal[0, 1, 2] = 0
    color: Color = Color.RED


class Collections(Record):
    numbers: list[int] = Field(default_factory=list)
    names: dict[Name, int] = Field(default_factory=dict)
    plain: list[Any] = Field(default_factory=list)


class Pin(Record):
    mode: Literal["input", "output"]
    max_on_seconds: float | None = Field(default=None, gt=0)


class Board(Record):
    port: str = Field(min_length=1)
    pins: dict[str, Pin] = Field(default_factory=dict)


class Config(Record):
    boards: dict[str, Board] = Field(default_factory=dict)


class Limits(Record):
    at_least: float = Field(default=1.0, ge=0.05)
    above: float = Field(default=1.0, gt=0)
    at_most: int = Field(default=0, le=10)
    below: int = Field(default=0, lt=5)
    name: str = Field(default="x", min_length=1, max_length=5)
    code: str = Field(default="abc", min_length=3)
    items: list[int] = Field(default_factory=list, max_length=2)
    table: dict[str, int] = Field(default_factory=dict, max_length=1)
    optional: float | None = Field(default=None, ge=1)
    annotated: Annotated[int, Field(ge=0, le=100)] = 50


class Optionals(Record):
    number: int | None = None
    either: int | str = 0
    auto: float | Literal["auto"] = "auto"


class A(Record):
    type: Literal["a"] = "a"
    size: int = 0


class B(Record):
    type: Literal["b"]
    name: str


class Holder(Record):
    item: Annotated[A | B, Tagged("type", default="a")] = Field(default_factory=A)
    items: list[Annotated[A | B, Tagged("type")]] = Field(default_factory=list)


class WithSecret(Record):
    token: Secret
    backup: Secret | None = None


class Loose(Record, extra="ignore"):
    name: str = "x"


class Checked(Record):
    low: int
    high: int
    calls: Any = Field(default_factory=list)

    def check(self) -> None:
        self.calls.append((self.low, self.high))
        if self.low > self.high:
            raise ValueError(f"low ({self.low}) must not exceed high ({self.high})")


class HasChecked(Record):
    inner: Checked


class Defaults(Record):
    tags: list[str] = Field(default_factory=list)
    table: dict[str, int] = Field(default_factory=dict)
    literal_list: list[int] = [1, 2]
    name: Name = "Bad Name"


class Dumped(Record):
    name: str = "n"
    color: Color = Color.RED
    token: Secret = Secret("s3cret")
    pins: dict[str, Pin] = Field(default_factory=dict)
    count: int = 1


class Frozen(Record, frozen=True):
    name: str
    tags: list[str] = Field(default_factory=list)
    table: dict[str, int] = Field(default_factory=dict)


class Mutable(Record):
    name: str


class SerialBoard(Record):
    type: str = "serial"
    port: str = "/dev/ttyACM0"
    baudrate: int = 9600

    def check(self) -> None:
        if not self.port.startswith("/dev/"):
            raise ValueError("port must be a /dev path")


class Arduino(SerialBoard):
    type: Literal["arduino"]
    sampling_ms: int = Field(default=19, ge=1)

    def check(self) -> None:
        super().check()
        if self.baudrate < 57600:
            raise ValueError("an arduino needs at least 57600 baud")


class Aliased(Record):
    from_: str = Field(alias="from", description="the sender")
    to: str = "me"


class Schema(Record):
    name: str = Field(description="what it is called", min_length=1)
    count: int = Field(default=3, ge=1, le=10, description="how many")
    ratio: float | None = Field(default=None, gt=0, description="a ratio")
    mode: Literal["on", "off"] = "off"
    level: Literal[0, 1] = 0
    color: Color = Color.RED
    pin: Pin | None = None
    tags: list[str] = Field(default_factory=list)
    table: dict[str, int] = Field(default_factory=dict)
    token: Secret | None = None


# -- each type ------------------------------------------------------------------------------------


def test_str_takes_text_only() -> None:
    assert Scalars.parse({"text": "hello"}).text == "hello"
    issue = only_issue(Scalars, {"text": 5})
    assert (issue.loc, issue.kind) == (("text",), "type")
    assert issue.message == "expected text (got 5)"


@pytest.mark.parametrize(("raw", "want"), [
    (5, 5), ("5", 5), (" 7 ", 7), ("-3", -3), ("0x76", 0x76), ("1_000", 1000), ("010", 10),
    (5.0, 5), (10**30, 10**30)])
def test_lenient_int_accepts_whole_numbers_and_their_text(raw: object, want: int) -> None:
    value = Scalars.parse({"count": raw}).count
    assert value == want and type(value) is int


@pytest.mark.parametrize("raw", [True, False, 5.5, "5.5", "abc", "", None, [5], {"a": 1}, float("nan"),
                                 float("inf")])
def test_int_refuses_bools_fractions_and_garbage(raw: object) -> None:
    issue = only_issue(Scalars, {"count": raw})
    assert (issue.loc, issue.kind) == (("count",), "type")
    assert issue.message.startswith("expected an integer (got ")


@pytest.mark.parametrize(("raw", "want"), [(1, 1.0), (2.5, 2.5), ("2.5", 2.5), (" -1e3 ", -1000.0)])
def test_lenient_float(raw: object, want: float) -> None:
    value = Scalars.parse({"ratio": raw}).ratio
    assert value == want and type(value) is float


@pytest.mark.parametrize("raw", [True, False, "x", None, [1.0], pytest.param(10**400, id="10**400")])
def test_float_refuses_bools_garbage_and_ints_too_big_for_a_float(raw: object) -> None:
    issue = only_issue(Scalars, {"ratio": raw})
    assert (issue.loc, issue.kind) == (("ratio",), "type")
    assert issue.message.startswith("expected a number")
    with pytest.raises(Invalid):
        StrictScalars.parse({"ratio": raw})


@pytest.mark.parametrize(("raw", "want"), [
    (True, True), (False, False), ("true", True), ("TRUE", True), (" yes ", True), ("on", True),
    ("1", True), ("false", False), ("no", False), ("off", False), ("0", False), (1, True), (0, False)])
def test_lenient_bool(raw: object, want: bool) -> None:
    assert Scalars.parse({"flag": raw}).flag is want


@pytest.mark.parametrize("raw", [2, -1, "maybe", "", None, 1.5, [True]])
def test_bool_refuses_other_values(raw: object) -> None:
    issue = only_issue(Scalars, {"flag": raw})
    assert issue.loc == ("flag",) and issue.message.startswith("expected true or false")


def test_none_field_takes_only_none() -> None:
    assert Scalars.parse({"nothing": None}).nothing is None
    issue = only_issue(Scalars, {"nothing": 0})
    assert issue.message == "expected nothing (null) (got 0)"


def test_any_takes_anything_as_is() -> None:
    thing = object()
    value = {"a": [1, thing]}
    assert Scalars.parse({"anything": value}).anything is value
    assert Collections.parse({"plain": [1, "x", None, thing]}).plain == [1, "x", None, thing]


def test_strict_refuses_text_for_numbers_and_bools() -> None:
    issues = issues_of(StrictScalars, {"count": "5", "ratio": "2.5", "flag": "true", "level": "1"})
    assert sorted(i.loc for i in issues) == [("count",), ("flag",), ("level",), ("ratio",)]
    assert all(i.kind == "type" for i in issues)
    with pytest.raises(Invalid):
        StrictScalars.parse({"count": 5.0})
    with pytest.raises(Invalid):
        StrictScalars.parse({"flag": 1})
    with pytest.raises(Invalid):
        StrictScalars.parse({"count": True})
    good = StrictScalars.parse({"count": 5, "ratio": 2, "flag": True, "level": 2})
    assert (good.count, good.ratio, good.flag, good.level) == (5, 2.0, True, 2)
    assert type(good.ratio) is float


def test_literal_str_and_int_choices() -> None:
    parsed = Choices.parse({"mode": "output", "level": 2})
    assert (parsed.mode, parsed.level) == ("output", 2)
    issue = only_issue(Choices, {"mode": "out"})
    assert (issue.loc, issue.kind) == (("mode",), "type")
    assert "'input'" in issue.message and "'output'" in issue.message and "(got 'out')" in issue.message


def test_literal_int_is_lenient_about_text_but_not_bools() -> None:
    level = Choices.parse({"level": "1"}).level
    assert level == 1 and type(level) is int
    assert Choices.parse({"level": " 2 "}).level == 2
    for raw in ("3", 3, True, 1.0, "one"):
        assert only_issue(Choices, {"level": raw}).loc == ("level",)
    assert Choices.parse({"mode": "input"}).mode == "input"
    with pytest.raises(Invalid):  # text choices are not trimmed or folded
        Choices.parse({"mode": "INPUT"})


def test_enum_by_value_and_member() -> None:
    assert Choices.parse({"color": "green"}).color is Color.GREEN
    assert Choices.parse({"color": Color.RED}).color is Color.RED
    issue = only_issue(Choices, {"color": "purple"})
    assert issue.loc == ("color",) and "'red'" in issue.message and "'green'" in issue.message
    assert only_issue(Choices, {"color": ["red"]}).loc == ("color",)  # unhashable: no crash


def test_list_items_checked_with_their_index() -> None:
    assert Collections.parse({"numbers": ["1", 2, 3.0]}).numbers == [1, 2, 3]
    assert Collections.parse({"numbers": (1, 2)}).numbers == [1, 2]
    issues = issues_of(Collections, {"numbers": [1, "x", 3, "y"]})
    assert [i.loc for i in issues] == [("numbers", 1), ("numbers", 3)]
    assert only_issue(Collections, {"numbers": "1,2"}).message == "expected a list (got '1,2')"
    assert only_issue(Collections, {"numbers": {"a": 1}}).message == "expected a list (got a table)"


def test_dict_keys_and_values_checked() -> None:
    assert Collections.parse({"names": {"led": "1", "fan_2": 2}}).names == {"led": 1, "fan_2": 2}
    issues = issues_of(Collections, {"names": {"Bad Key": 1, "ok": "x", 5: 1}})
    by_loc = {i.loc: i for i in issues}
    assert set(by_loc) == {("names", "Bad Key"), ("names", "ok"), ("names", "5")}
    assert by_loc[("names", "Bad Key")].message.startswith("names are lower-case letters")
    assert by_loc[("names", "Bad Key")].kind == "value"
    assert by_loc[("names", "ok")].message == "expected an integer (got 'x')"
    assert by_loc[("names", "5")].message == "expected text (got 5)"
    assert only_issue(Collections, {"names": [1]}).message == "expected a table (got a list)"


def test_nested_records_report_the_full_path() -> None:
    data = {"boards": {"uno": {"port": "/dev/ttyACM0", "pins": {"D13": {"mode": "out"},
                                                                   "D12": {"mode": "output"}}}}}
    issue = only_issue(Config, data)
    assert issue.loc == ("boards", "uno", "pins", "D13", "mode")
    assert issue.where == "boards.uno.pins.D13.mode"
    assert str(issue).startswith("boards.uno.pins.D13.mode: expected ")
    config = Config.parse({"boards": {"uno": {"port": "p", "pins": {"D13": {"mode": "output"}}}}})
    assert config.boards["uno"].pins["D13"] == Pin(mode="output")
    assert isinstance(config.boards["uno"], Board)


def test_optional_and_unions() -> None:
    assert Optionals.parse({"number": None}).number is None
    assert Optionals.parse({"number": "5"}).number == 5
    assert only_issue(Optionals, {"number": "x"}).message == "expected an integer (got 'x')"
    assert Optionals.parse({"either": "abc"}).either == "abc"
    assert Optionals.parse({"either": 5}).either == 5
    assert Optionals.parse({"auto": 2}).auto == 2.0
    assert Optionals.parse({"auto": "auto"}).auto == "auto"
    issue = only_issue(Optionals, {"auto": "fast"})
    assert issue.loc == ("auto",) and issue.kind == "type"
    # every member's expectation, not only the first one's
    assert "a number" in issue.message and "'auto'" in issue.message, issue.message
    assert issue.message.endswith("(got 'fast')")
    assert only_issue(Optionals, {"either": [1]}).loc == ("either",)


def test_union_of_records_reports_the_member_that_fitted_best() -> None:
    class Either(Record):
        thing: Pin | Board

    assert Either.parse({"thing": {"port": "p"}}).thing == Board(port="p")
    issue = only_issue(Either, {"thing": {"mode": "output", "max_on_seconds": -1}})
    assert issue.loc == ("thing", "max_on_seconds")
    assert only_issue(Either, {"thing": 5}).loc == ("thing",)


def test_secret_is_masked_everywhere_but_reveal() -> None:
    parsed = WithSecret.parse({"token": "123:abc"})
    assert isinstance(parsed.token, Secret) and parsed.token.reveal() == "123:abc"
    assert "123:abc" not in repr(parsed) and "123:abc" not in str(parsed.token)
    assert str(parsed.token) == Secret.MASK == "**********"
    assert repr(parsed.token) == "Secret('**********')"
    assert parsed.dump(json=True) == {"token": "**********", "backup": None}
    assert parsed.dump()["token"] == Secret("123:abc")
    assert WithSecret.parse({"token": Secret("x")}).token.reveal() == "x"
    assert Secret("a") == Secret("a") and Secret("a") != Secret("b") and Secret("a") != "a"
    assert len({Secret("a"), Secret("a")}) == 1
    issue = only_issue(WithSecret, {"token": 12345678})
    assert "12345678" not in issue.message and issue.input is None
    assert WithSecret.parse({"token": "t", "backup": "b"}).backup == Secret("b")


# -- limits -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(("data", "loc", "message"), [
    ({"at_least": 0.01}, "at_least", "must be at least 0.05 (got 0.01)"),
    ({"above": 0}, "above", "must be greater than 0 (got 0)"),
    ({"at_most": 11}, "at_most", "must be at most 10 (got 11)"),
    ({"below": 5}, "below", "must be less than 5 (got 5)"),
    ({"name": ""}, "name", "must not be empty"),
    ({"name": "abcdef"}, "name", "must have at most 5 characters (got 6)"),
    ({"code": "ab"}, "code", "needs at least 3 characters"),
    ({"items": [1, 2, 3]}, "items", "must have at most 2 items (got 3)"),
    ({"table": {"a": 1, "b": 2}}, "table", "must have at most 1 entries (got 2)"),
    ({"optional": 0.5}, "optional", "must be at least 1 (got 0.5)"),
    ({"annotated": -1}, "annotated", "must be at least 0 (got -1)"),
    ({"annotated": 101}, "annotated", "must be at most 100 (got 101)"),
    ({"above": float("nan")}, "above", "must be greater than 0 (got nan)"),
])
def test_limits(data: dict[str, Any], loc: str, message: str) -> None:
    issue = only_issue(Limits, data)
    assert (issue.loc, issue.kind, issue.message) == ((loc,), "value", message)


def test_limits_at_the_boundary_hold_and_skip_none() -> None:
    parsed = Limits.parse({"at_least": 0.05, "above": 0.001, "at_most": 10, "below": 4, "name": "abcde",
                           "code": "abc", "items": [1, 2], "optional": None, "annotated": 0})
    assert (parsed.at_least, parsed.at_most, parsed.optional, parsed.annotated) == (0.05, 10, None, 0)
    assert Limits.parse({"optional": 1}).optional == 1.0


def test_limit_messages_do_not_echo_huge_values() -> None:
    issue = only_issue(Limits, {"at_most": 10**200})
    assert issue.message.startswith("must be at most 10 (got ") and len(issue.message) < 120


# -- Before and After -----------------------------------------------------------------------------------


def _text_id(value: object) -> object:
    if isinstance(value, bool):
        raise ValueError("an id is a number or text, not true/false")
    return str(value) if isinstance(value, int) else value


def _even(value: int) -> int:
    if value % 2:
        raise ValueError(f"must be even (got {value})")
    return value


class Functions(Record):
    id: Annotated[str, Before(_text_id)] = "0"
    even: Annotated[int, After(_even)] = 0
    both: Annotated[int, Field(ge=0), After(_even)] = 0
    name: Name | None = None


def test_before_runs_on_the_raw_value() -> None:
    assert Functions.parse({"id": 123456}).id == "123456"
    issue = only_issue(Functions, {"id": True})
    assert (issue.loc, issue.kind, issue.message) == (("id",), "value", "an id is a number or text, not true/false")
    assert only_issue(Functions, {"id": [1]}).message == "expected text (got a list)"


def test_after_runs_once_the_type_holds() -> None:
    assert Functions.parse({"even": "4"}).even == 4
    issue = only_issue(Functions, {"even": "3"})
    assert (issue.loc, issue.kind, issue.message) == (("even",), "value", "must be even (got 3)")
    issue = only_issue(Functions, {"even": "x"})  # the type fails: the function does not run
    assert issue.message == "expected an integer (got 'x')"
    issue = only_issue(Functions, {"both": -1})  # the limit first
    assert issue.message == "must be at least 0 (got -1)"
    assert only_issue(Functions, {"both": 3}).message == "must be even (got 3)"
    assert Functions.parse({"name": None}).name is None
    assert only_issue(Functions, {"name": "Bad"}).loc == ("name",)


# -- tagged unions --------------------------------------------------------------------------------------


def test_tagged_union_picks_by_type() -> None:
    parsed = Holder.parse({"item": {"type": "b", "name": "x"}, "items": [{"type": "a", "size": "2"}]})
    assert parsed.item == B(type="b", name="x")
    assert parsed.items == [A(size=2)]
    assert Holder.parse({"item": {"size": 3}}).item == A(size=3)  # default when absent
    assert Holder.parse({}).item == A()
    assert Holder.parse({"item": B(type="b", name="y")}).item == B(type="b", name="y")


def test_tagged_union_unknown_type_lists_the_known_ones() -> None:
    issue = only_issue(Holder, {"item": {"type": "c"}})
    assert (issue.loc, issue.kind) == (("item", "type"), "value")
    assert issue.message == "unknown type 'c'; use one of: a, b"
    issue = only_issue(Holder, {"items": [{"size": 1}]})  # no default: the tag is missing
    assert (issue.loc, issue.kind) == (("items", 0), "missing")
    assert issue.message == "type is missing; use one of: a, b"
    assert only_issue(Holder, {"item": {"type": 5}}).loc == ("item", "type")
    assert only_issue(Holder, {"item": {"type": ["a"]}}).loc == ("item", "type")
    assert only_issue(Holder, {"item": "a"}).message == "expected a table (got 'a')"
    huge = only_issue(Holder, {"item": {"type": "x" * 10_000}})
    assert len(huge.message) < 200


def test_tagged_union_nested_issues_carry_the_full_path() -> None:
    issues = issues_of(Holder, {"items": [{"type": "a"}, {"type": "b", "name": 5, "extra": 1}]})
    assert sorted(map(str, issues)) == ["items.1.extra: unknown key", "items.1.name: expected text (got 5)"]
    issue = only_issue(Holder, {"item": {"type": "b"}})
    assert (issue.loc, issue.kind) == (("item", "name"), "missing")


# -- every issue at once --------------------------------------------------------------------------------


def test_every_issue_is_reported_at_once_with_kinds() -> None:
    data = {"boards": {"uno": {"pins": {"D13": {"mode": "out", "max_on_seconds": -1, "saf": "off"},
                                        "D2": {}}},
                       "mega": {"port": 5}},
            "extra": True}
    issues = issues_of(Config, data)
    found = {(i.loc, i.kind) for i in issues}
    assert found == {
        (("boards", "uno", "port"), "missing"),
        (("boards", "uno", "pins", "D13", "mode"), "type"),
        (("boards", "uno", "pins", "D13", "max_on_seconds"), "value"),
        (("boards", "uno", "pins", "D13", "saf"), "unknown"),
        (("boards", "uno", "pins", "D2", "mode"), "missing"),
        (("boards", "mega", "port"), "type"),
        (("extra",), "unknown"),
    }
    assert len(issues) == len(found)
    with pytest.raises(Invalid) as caught:
        Config.parse(data)
    text = str(caught.value)
    assert "boards.uno.port: required key is missing" in text and "extra: unknown key" in text
    assert isinstance(caught.value, ValueError)


def test_extra_ignore_drops_unknown_keys_and_forbid_reports_them() -> None:
    loose = Loose.parse({"name": "a", "other": 1, 2: 3})
    assert loose.dump() == {"name": "a"} and not hasattr(loose, "other")
    issues = issues_of(Mutable, {"name": "a", "other": 1, 2: 3})
    assert [(i.loc, i.kind, i.message) for i in issues] == [
        (("other",), "unknown", "unknown key"), (("2",), "unknown", "unknown key")]


# -- check() --------------------------------------------------------------------------------------------


def test_check_runs_only_when_fields_are_valid() -> None:
    calls: list[Any] = []
    issue = only_issue(Checked, {"low": "x", "high": 1, "calls": calls})
    assert issue.loc == ("low",) and calls == []
    Checked.parse({"low": 1, "high": 2, "calls": calls})
    assert calls == [(1, 2)]


def test_check_error_is_an_issue_at_the_records_loc() -> None:
    issue = only_issue(Checked, {"low": 3, "high": 1})
    assert (issue.loc, issue.kind, issue.message) == ((), "value", "low (3) must not exceed high (1)")
    issue = only_issue(HasChecked, {"inner": {"low": 3, "high": 1}})
    assert (issue.loc, issue.kind) == (("inner",), "value")
    assert str(issue) == "inner: low (3) must not exceed high (1)"


# -- defaults ---------------------------------------------------------------------------------------


def test_defaults_are_fresh_per_instance() -> None:
    first, second = Defaults.parse({"name": "ok"}), Defaults.parse({"name": "ok"})
    first.tags.append("x")
    first.table["a"] = 1
    first.literal_list.append(3)
    assert second.tags == [] and second.table == {} and second.literal_list == [1, 2]
    assert Defaults.parse({"name": "ok"}).literal_list == [1, 2]


def test_defaults_are_checked_too() -> None:
    issue = only_issue(Defaults, {})
    assert (issue.loc, issue.kind) == (("name",), "value")
    assert issue.message.startswith("names are lower-case letters")


# -- fields_set, dump, replace, equality, frozen ----------------------------------------------------------


def test_fields_set_lists_what_the_input_gave() -> None:
    assert Scalars.parse({"count": 1, "flag": True}).fields_set == {"count", "flag"}
    assert Scalars.parse({}).fields_set == frozenset()
    assert Aliased.parse({"from": "a"}).fields_set == {"from_"}
    assert Scalars(count=2).fields_set == {"count"}


def test_dump() -> None:
    record = Dumped.parse({"name": "x", "color": "green", "pins": {"D1": {"mode": "input"}}})
    plain = record.dump()
    assert plain["color"] is Color.GREEN and isinstance(plain["token"], Secret)
    assert plain["pins"] == {"D1": {"mode": "input", "max_on_seconds": None}}
    assert isinstance(plain["pins"]["D1"], dict)
    assert record.dump(json=True) == {"name": "x", "color": "green", "token": "**********",
                                      "pins": {"D1": {"mode": "input", "max_on_seconds": None}},
                                      "count": 1}
    assert type(record.dump(json=True)["color"]) is str
    assert record.dump(exclude=["token", "pins"]) == {"name": "x", "color": Color.GREEN, "count": 1}
    assert record.dump(exclude_defaults=True, json=True) == {
        "name": "x", "color": "green", "pins": {"D1": {"mode": "input"}}}
    assert Dumped.parse({}).dump(exclude_defaults=True) == {}


def test_replace_checks_again() -> None:
    pin = Pin.parse({"mode": "output", "max_on_seconds": 5})
    longer = pin.replace(max_on_seconds="10")
    assert longer.max_on_seconds == 10.0 and pin.max_on_seconds == 5.0 and longer is not pin
    with pytest.raises(Invalid) as caught:
        pin.replace(max_on_seconds=-1)
    assert caught.value.issues[0].loc == ("max_on_seconds",)
    with pytest.raises(Invalid):
        pin.replace(nope=1)
    with pytest.raises(Invalid):
        Checked.parse({"low": 1, "high": 2}).replace(low=5)
    assert Aliased.parse({"from": "a"}).replace(to="you").dump() == {"from_": "a", "to": "you"}
    assert WithSecret.parse({"token": "t"}).replace(backup="b").token.reveal() == "t"


def test_equality() -> None:
    assert Pin.parse({"mode": "input"}) == Pin(mode="input")
    assert Pin.parse({"mode": "input"}) != Pin(mode="output")
    assert Pin(mode="input") != {"mode": "input", "max_on_seconds": None}

    class OtherPin(Pin):
        pass

    assert Pin(mode="input") != OtherPin(mode="input")


def test_frozen_records_refuse_assignment_and_hash() -> None:
    record = Frozen.parse({"name": "a", "tags": ["x"], "table": {"k": 1}})
    with pytest.raises(AttributeError):
        setattr(record, "name", "b")
    assert record.name == "a"
    same = Frozen.parse({"name": "a", "tags": ["x"], "table": {"k": 1}})
    assert hash(record) == hash(same) and len({record, same}) == 1
    assert hash(Frozen.parse({"name": "a", "table": {"b": 1, "a": 2}})) == \
        hash(Frozen.parse({"name": "a", "table": {"a": 2, "b": 1}}))


def test_frozen_record_with_keys_that_do_not_sort_still_hashes() -> None:
    class Keys(Record, frozen=True):
        table: dict[Any, int]

    assert isinstance(hash(Keys.parse({"table": {1: 1, "a": 2}})), int)


def test_mutable_records_allow_assignment_and_refuse_hash() -> None:
    record = Mutable(name="a")
    record.name = "b"
    assert record.name == "b" and record == Mutable(name="b")
    with pytest.raises(TypeError):
        hash(record)


# -- inheritance ----------------------------------------------------------------------------------------


def test_subclass_can_make_a_field_required_and_add_fields() -> None:
    assert SerialBoard.parse({}).type == "serial"
    assert Arduino.field_names() == ("type", "port", "baudrate", "sampling_ms")
    issue = only_issue(Arduino, {"baudrate": 57600})
    assert (issue.loc, issue.kind) == (("type",), "missing")
    assert only_issue(Arduino, {"type": "serial", "baudrate": 57600}).loc == ("type",)
    arduino = Arduino.parse({"type": "arduino", "baudrate": 57600, "sampling_ms": "5"})
    assert (arduino.port, arduino.sampling_ms) == ("/dev/ttyACM0", 5)
    assert only_issue(Arduino, {"type": "arduino", "baudrate": 57600, "sampling_ms": 0}).loc == ("sampling_ms",)
    assert only_issue(SerialBoard, {"sampling_ms": 5}).kind == "unknown"


def test_subclass_check_calls_super() -> None:
    assert only_issue(Arduino, {"type": "arduino"}).message == "an arduino needs at least 57600 baud"
    issue = only_issue(Arduino, {"type": "arduino", "baudrate": 57600, "port": "COM3"})
    assert issue.message == "port must be a /dev path"


# -- aliases -------------------------------------------------------------------------------------------


def test_alias_is_read_and_so_is_the_field_name() -> None:
    assert Aliased.parse({"from": "a"}).from_ == "a"
    assert Aliased.parse({"from_": "b"}).from_ == "b"
    issue = only_issue(Aliased, {})
    assert (issue.loc, issue.kind) == (("from",), "missing")
    assert only_issue(Aliased, {"from": 5}).loc == ("from",)
    schema = Aliased.json_schema()
    assert schema["required"] == ["from"] and "from" in schema["properties"]
    assert schema["properties"]["from"] == {"type": "string", "description": "the sender"}


# -- json_schema -------------------------------------------------------------------------------------


def test_json_schema() -> None:
    schema = Schema.json_schema()
    assert schema["type"] == "object" and schema["additionalProperties"] is False
    assert schema["required"] == ["name"]
    props = schema["properties"]
    assert props["name"] == {"type": "string", "description": "what it is called", "minLength": 1}
    assert props["count"] == {"type": "integer", "minimum": 1, "maximum": 10, "default": 3,
                              "description": "how many"}
    assert props["ratio"] == {"anyOf": [{"type": "number", "exclusiveMinimum": 0}, {"type": "null"}],
                              "default": None, "description": "a ratio"}
    assert props["mode"] == {"enum": ["on", "off"], "type": "string", "default": "off"}
    assert props["level"] == {"enum": [0, 1], "type": "integer", "default": 0}
    assert props["color"]["enum"] == ["red", "green"] and props["color"]["type"] == "string"
    assert props["pin"]["anyOf"][0] == Pin.json_schema()
    assert props["pin"]["anyOf"][0]["properties"]["mode"]["enum"] == ["input", "output"]
    assert props["pin"]["anyOf"][0]["required"] == ["mode"]
    assert props["tags"] == {"type": "array", "items": {"type": "string"}}
    assert props["table"] == {"type": "object", "additionalProperties": {"type": "integer"}}
    assert props["token"] == {"anyOf": [{"type": "string"}, {"type": "null"}], "default": None}
    assert "additionalProperties" not in Loose.json_schema()
    assert "required" not in Scalars.json_schema()
    assert Limits.json_schema()["properties"]["annotated"] == {"type": "integer", "minimum": 0, "maximum": 100,
                                                               "default": 50}


# -- hostile input ------------------------------------------------------------------------------------


@pytest.mark.parametrize("data", [[1, 2], "text", None, 5, b"bytes", Pin(mode="input")])
def test_top_level_that_is_not_a_table_gives_one_clean_issue(data: object) -> None:
    issue = only_issue(Config, data)
    assert (issue.loc, issue.kind) == ((), "type")
    assert issue.message.startswith("expected a table (got ")


def test_deeply_nested_garbage() -> None:
    garbage: Any = {"x": 1}
    for _ in range(500):
        garbage = {"deeper": [garbage, garbage]}
    issues = issues_of(Config, {"boards": {"uno": garbage}, "junk": garbage})
    assert {i.loc for i in issues} == {("boards", "uno", "port"), ("boards", "uno", "deeper"), ("junk",)}
    issue = only_issue(Collections, {"numbers": [garbage]})
    assert issue.message == "expected an integer (got a table)"


def test_huge_strings_are_not_echoed_whole() -> None:
    huge = "x" * 100_000
    for cls, data in [(Scalars, {"count": huge}), (Choices, {"mode": huge}), (Choices, {"color": huge}),
                      (Optionals, {"auto": huge}), (Scalars, {"text": [huge]})]:
        for issue in issues_of(cls, data):
            assert len(issue.message) < 300, (cls, issue.message[:200])
    issue = only_issue(Scalars, {"count": huge})
    assert "'" + "x" * 76 + "..." in issue.message
    assert len(issue.message.split("(got ")[1]) <= 81


def test_non_string_keys() -> None:
    issues = issues_of(Scalars, {1: "a", None: 2, (1, 2): 3})
    assert sorted(i.loc for i in issues) == [("(1, 2)",), ("1",), ("None",)]
    assert all(i.kind == "unknown" for i in issues)
    assert Collections.parse({"names": {}}).names == {}


# -- keyword construction ----------------------------------------------------------------------------


def test_keyword_construction_is_checked() -> None:
    pin = Pin(mode="output", max_on_seconds=5)
    assert pin.max_on_seconds == 5.0 and pin.fields_set == {"mode", "max_on_seconds"}
    bad: dict[str, Any] = {"mode": "out", "max_on_seconds": 0, "what": 1}
    with pytest.raises(Invalid) as caught:
        Pin(**bad)
    assert {i.loc for i in caught.value.issues} == {("mode",), ("max_on_seconds",), ("what",)}
    with pytest.raises(Invalid):
        Pin(**{})


def test_validator_for_single_values() -> None:
    check = validator(list[Pin])
    issues: list[Issue] = []
    assert check([{"mode": "input"}], ("pins",), issues) == [Pin(mode="input")] and issues == []
    check([{"mode": "x"}], ("pins",), issues)
    assert [i.loc for i in issues] == [("pins", 0, "mode")]
    with pytest.raises(TypeError):
        validator(set[int])


def test_values_too_long_to_show_are_still_reported() -> None:
    issue = only_issue(Scalars, {"text": 10**5000})  # int -> text refuses past 4300 digits
    assert issue.message == "expected text (got a value too long to show)"
    assert only_issue(Limits, {"at_most": 10**5000}).message.startswith("must be at most 10 (got ")


class Level(enum.IntEnum):
    LOW = 1
    HIGH = 2


def test_schema_of_an_int_enum_says_integer() -> None:
    class Leveled(Record):
        level: Level = Level.LOW

    assert Leveled.json_schema()["properties"]["level"]["enum"] == [1, 2]
    assert Leveled.json_schema()["properties"]["level"]["type"] == "integer"
    assert Leveled.parse({"level": 2}).level is Level.HIGH
    assert Leveled.parse({}).dump(json=True) == {"level": 1}


def test_a_field_cannot_hide_a_record_method() -> None:
    class Hiding(Record):
        check: int = 0  # type: ignore[assignment]

    with pytest.raises(TypeError, match="Hiding.check"):
        Hiding.parse({"check": 1})


def test_a_fields_own_limits_hold_before_its_after_function_runs():
    def first_letter(value: str) -> str:
        return value[0]  # would raise IndexError on "" if it ran before min_length

    class Initial(Record):
        name: Annotated[str, After(first_letter)] = Field(default="a", min_length=1)

    assert Initial.parse({"name": "hello"}).name == "h"
    with pytest.raises(Invalid) as err:
        Initial.parse({"name": ""})
    assert [(i.where, i.message) for i in err.value.issues] == [("name", "must not be empty")]
