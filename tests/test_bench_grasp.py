"""`teleop bench grasp`: a holdable library object grasped, lifted, shaken and carried by the synthetic operator."""
import json

import pytest

from teleop.cli.main import main
from teleop.control.grasp_objects import HAND_APERTURE_M, HAND_MAX_MASS_KG, holdable_objects, library
from teleop.core.errors import ConfigError

OBJECT_KEYS = {"object", "kind", "task", "grasp", "size_mm", "mass_kg", "trials", "lifted", "held_after_shake", "held",
               "slip_mm", "slip_mm_max", "shake_peak_g"}


def test_grasp_bench_on_one_object(capsys):
    assert main(["bench", "grasp", "--objects", "peach", "--trials", "1", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    (row,) = out["objects"]
    assert set(row) == OBJECT_KEYS and row["object"] == "peach" and row["trials"] == 1
    assert 0 <= row["held"] <= row["held_after_shake"] <= row["lifted"] <= 1
    assert (row["slip_mm"] is None) == (row["held"] == 0) and (row["slip_mm"] is None or row["slip_mm"] >= 0)
    assert row["shake_peak_g"] > 0.1                     # the palm really shook
    assert out["hold_rate"] == row["held"] and out["hold_rate_by_kind"] == {"sphere": row["held"]}
    assert out["trials"] == 1 and out["failed"] == []


def test_holdable_objects_fit_the_hand_and_others_are_refused():
    objects = library()
    held = holdable_objects()
    assert held and len(held) < len(objects)
    assert all(o.narrow <= HAND_APERTURE_M and o.mass <= HAND_MAX_MASS_KG for o in held)
    wide = next(o for o in objects if o.narrow > HAND_APERTURE_M)
    with pytest.raises(ConfigError, match="holdable objects: .*'peach'"):
        holdable_objects([wide.name])
