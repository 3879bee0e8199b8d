"""snlint.records.dataclass behaves as the standard library's: the same repr text, the
same equality and hashing rules, frozen and slotted classes, fields that do not compare,
and the methods a class writes itself kept."""

from __future__ import annotations

import dataclasses
import pickle
from dataclasses import field

import pytest

from snlint.findings import Span, record
from snlint.records import dataclass as fast

OPTIONS = [{}, {"frozen": True}, {"eq": False}, {"frozen": True, "eq": False}, {"repr": False},
           {"frozen": True, "slots": True}, {"slots": True}, {"kw_only": True}]


def both(**options):
    """The same class body made by each decorator."""
    made = []
    for decorate in (dataclasses.dataclass, fast):
        class Point:
            x: int
            y: object = None
            note: str = field(default="", compare=False, repr=False)
            tags: list = field(default_factory=list, hash=False)
        made.append(decorate(**options)(Point))
    return made


@pytest.mark.parametrize("options", OPTIONS, ids=str)
def test_repr_equality_and_hashing_match_the_standard_librarys(options):
    std, ours = both(**options)

    def trio(cls):
        return cls(x=1, y=(2, "b"), note="n"), cls(x=1, y=(2, "b"), note="other"), cls(x=1, y=[3])

    a, b, c = trio(std)
    p, q, r = trio(ours)
    if options.get("repr", True):
        assert repr(p).replace(ours.__qualname__, "X") == repr(a).replace(std.__qualname__, "X")
    else:
        assert ours.__repr__ is object.__repr__
    assert (p == q, p == r, p == p, p != q) == (a == b, a == c, a == a, a != b)
    assert (ours.__hash__ is None) == (std.__hash__ is None)
    if std.__hash__ is not None and options.get("eq", True):
        assert hash(p) == hash(q)  # equal when only `note`, which does not compare, differs
    assert p.__eq__(3) is NotImplemented or not options.get("eq", True)
    assert [f.name for f in dataclasses.fields(ours)] == [f.name for f in dataclasses.fields(std)]


def test_frozen_assignment_raises_as_it_does_for_the_standard_library():
    (std, ours) = both(frozen=True, slots=True)
    for cls in (std, ours):
        with pytest.raises(dataclasses.FrozenInstanceError):
            cls(1).x = 2
    assert dataclasses.replace(ours(1, 2), y=3) == ours(1, 3)


def outcome(act):
    try:
        act()
    except Exception as e:  # noqa: BLE001 - the exception is what is compared
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("slots", [False, True])
def test_a_frozen_class_refuses_assignment_and_deletion_as_the_standard_librarys_does(slots):
    """The shared __setattr__/__delattr__ (not compiled per class) raise what the
    generated ones raise, for fields, other names, and a plain subclass's own names."""
    results = []
    for cls in both(frozen=True, slots=slots):
        class Plain(cls):  # not a dataclass: its own attributes may be set
            pass

        one, sub = cls(1), Plain(1)
        acts = [lambda: setattr(one, "x", 2), lambda: delattr(one, "x"), lambda: setattr(one, "other", 1),
                lambda: delattr(one, "other"), lambda: setattr(sub, "x", 2), lambda: delattr(sub, "y")]
        if not slots:
            acts += [lambda: setattr(sub, "other", 1), lambda: delattr(sub, "other")]
        results.append([outcome(act) for act in acts] + [getattr(sub, "other", None), one.x])
        assert cls.__setattr__.__qualname__.endswith("Point.__setattr__")
    assert results[0] == results[1]
    assert results[1][0] == ("FrozenInstanceError", "cannot assign to field 'x'")


def test_the_standard_librarys_dataclasses_keep_their_compiled_methods():
    """The shared methods are lent to `dataclasses` only while it makes our class."""
    compiled = dataclasses._frozen_get_del_attr
    fast(frozen=True)(type("Made", (), {"__annotations__": {"x": "int"}, "__module__": __name__}))
    assert dataclasses._frozen_get_del_attr is compiled

    @dataclasses.dataclass(frozen=True)
    class Std:
        x: int

    assert Std.__setattr__.__code__ is not fast(frozen=True)(type("Other", (), {
        "__annotations__": {"x": "int"}, "__module__": __name__})).__setattr__.__code__
    assert Std.__setattr__.__code__.co_filename == "<string>"  # compiled by dataclasses


def test_methods_the_class_writes_are_kept():
    @fast(frozen=True)
    class Written:
        x: int

        def __eq__(self, other):
            return True

        def __hash__(self):
            return 7

        def __repr__(self):
            return "written"

    assert Written(1) == Written(2) and hash(Written(1)) == 7 and repr(Written(1)) == "written"

    @fast
    class OnlyEq:
        x: int

        def __eq__(self, other):
            return False

    # As dataclasses: a written __eq__ with no __hash__ leaves the class unhashable.
    assert OnlyEq.__hash__ is None and OnlyEq(1) != OnlyEq(1)


def test_a_recursive_repr_shows_dots():
    @fast(eq=False)
    class Node:
        child: object = None

    node = Node()
    node.child = node
    assert repr(node) == "test_a_recursive_repr_shows_dots.<locals>.Node(child=...)"


def test_a_subclass_compares_its_own_fields_and_never_equals_its_base():
    @fast(frozen=True)
    class Base:
        x: int

    @fast(frozen=True)
    class Sub(Base):
        y: int = 0

    assert Sub(1, 2) != Sub(1, 3) and Sub(1, 2) == Sub(1, 2) and Base(1) != Sub(1)
    assert repr(Sub(1, 2)).endswith("Sub(x=1, y=2)")


def test_records_pickle_back_to_equal_values_with_equal_hashes():
    span = Span(1, 2, 3, 4)
    back = pickle.loads(pickle.dumps(span))
    assert back == span and hash(back) == hash(span) and back is not span

    @record
    class Pair:
        a: int
        b: str = field(default="", compare=False)

    assert Pair(1, "x") == Pair(1, "y") and {Pair(1, "x"), Pair(1, "y")} == {Pair(1)}


def test_order_goes_to_the_standard_library():
    @fast(order=True, frozen=True)
    class Ranked:
        n: int

    assert Ranked(1) < Ranked(2) and sorted([Ranked(2), Ranked(1)]) == [Ranked(1), Ranked(2)]


def test_a_class_without_a_docstring_is_documented_by_its_name():
    @fast
    class Bare:
        x: int

    @fast
    class Told:
        """What it is."""

        x: int

    assert (Bare.__doc__, Told.__doc__) == ("Bare", "What it is.")
