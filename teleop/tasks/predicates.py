"""The predicate catalog: the registry with every predicate registered (see :mod:`predicate_base`).

Import predicates from here. Registration order (the catalog's order) is geometric predicates,
then contacts, history, joints and scene events; both parts import only :mod:`predicate_base`.
"""
from __future__ import annotations

from teleop.tasks import predicates_geom, predicates_lh, predicates_state
from teleop.tasks import predicates_ld
from teleop.tasks.predicate_base import PREDICATES, Predicate, build_predicate, in_interior, local, register, tilt

__all__ = ["PREDICATES", "Predicate", "build_predicate", "in_interior", "local", "register", "tilt",
           "predicates_geom", "predicates_ld", "predicates_lh", "predicates_state"]
