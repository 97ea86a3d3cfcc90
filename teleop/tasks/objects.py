"""The object library: the kind registry with every kind registered (see :mod:`kinds`).

Import kinds from here. Registration order is the free objects (:mod:`items`), then the fixtures
(:mod:`fixtures`); both import only :mod:`kinds`, which owns the registry.
"""
from __future__ import annotations

from teleop.tasks import items  # first: the registry keeps the library's order (items, then fixtures)
from teleop.tasks import items_household
from teleop.tasks import items_ld
from teleop.tasks import items_lh
from teleop.tasks import fixtures
from teleop.tasks import fixtures_household
from teleop.tasks import fixtures_ld
from teleop.tasks import fixtures_lh
from teleop.tasks.kinds import KINDS, Interior, Kind, Shape, kind_defaults

__all__ = ["KINDS", "Interior", "Kind", "Shape", "kind_defaults", "fixtures", "fixtures_household", "fixtures_ld",
           "fixtures_lh", "items", "items_household", "items_ld", "items_lh"]
