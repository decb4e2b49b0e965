"""`==` / `!=` between dicts (dict, OrderedDict, defaultdict) as dict_richcompare does."""

from __future__ import annotations

import collections
import operator

from .containers import DictVariable

# dict classes whose == is dict's (OrderedDict's also compares the order with another one)
DICT_EQ = (dict, collections.OrderedDict, collections.defaultdict)


def plain_dicts(a, b) -> bool:
    return all(isinstance(v, DictVariable) and v.python_type() in DICT_EQ for v in (a, b))


def dicts_equal(tx, a: DictVariable, b: DictVariable) -> bool:
    """dict_richcompare: the same keys, then each value compared (the same object is equal)."""
    if len(a.items) != len(b.items) or a.items.keys() != b.items.keys():
        return False
    ordered = collections.OrderedDict
    both_ordered = issubclass(a.python_type(), ordered) and issubclass(b.python_type(), ordered)
    if both_ordered and list(a.items) != list(b.items):
        return False
    for key, value in a.items.items():
        other = b.items[key]
        if value is not other and not _binary_op(tx, operator.eq, value, other).truth(tx):
            return False
    return True


def _binary_op(tx, op, a, b):
    from .builtins import binary_op

    return binary_op(tx, op, a, b)
