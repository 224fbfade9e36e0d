"""Value classes without ``dataclasses``: read-only or mutable slots, compared and printed by field.

``dataclasses`` imports ``inspect`` (and with it ``ast``, ``dis``, ``tokenize``) and builds
each class at import, a cost every per-reply command and ``memcite stats`` would pay at
start-up. These two bases give what the code used of a dataclass: equality and ``repr`` by
field, hashing and read-only fields for the frozen kind.
"""

from __future__ import annotations

_set = object.__setattr__


class FrozenSlots:
    """A frozen dataclass without the dataclass: read-only slots, equality and ``repr``.

    A subclass lists its fields in ``__slots__`` and ``_fields``, those that == compares in
    ``_compared``, and sets them in ``__init__`` with ``object.__setattr__``. (Also the base
    of the ledger's and retention's small values, built on the per-reply path and when
    ``memcite stats`` starts.)
    """

    __slots__ = ()
    _fields: tuple[str, ...] = ()
    _compared: tuple[str, ...] = ()

    def _key(self) -> tuple:
        return tuple(getattr(self, name) for name in self._compared)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._key() == other._key()  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{self.__class__.__qualname__}({shown})"

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"cannot delete field {name!r}")

    def __reduce__(self):  # copy and pickle build a new object rather than assign fields
        return self.__class__, tuple(getattr(self, name) for name in self._fields)


class Slots:
    """A mutable dataclass without the dataclass: slots, equality and ``repr`` by field.

    A subclass lists its fields in ``__slots__`` and ``_fields`` and sets them in
    ``__init__``. Not hashable, as a mutable dataclass is not. (The base of retention's
    mutable values, built when ``memcite stats`` starts.)
    """

    __slots__ = ()
    _fields: tuple[str, ...] = ()
    __hash__ = None  # type: ignore[assignment]

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return all(getattr(self, name) == getattr(other, name) for name in self._fields)

    def __repr__(self) -> str:
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self._fields)
        return f"{self.__class__.__qualname__}({shown})"
