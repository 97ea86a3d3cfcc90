"""Retargeting: operator arms and hands -> robot joint targets (see docs/retargeting.md)."""
from retarget.bimanual import BimanualRetargeter, HandInput, OperatorInput, RetargetResult, SideHealth
from retarget.config import ArmConfig, HandConfig, RetargetConfig, load_config, load_hand_config
from retarget.nodes import NODE_NAMES, RetargetInputError, hand_frame, validate_nodes, webxr_to_nodes
from retarget.profile import DEFAULT_PROFILE, CalibrationSample, OperatorProfile, calibrate

__all__ = ["BimanualRetargeter", "HandInput", "OperatorInput", "RetargetResult", "SideHealth", "ArmConfig",
           "HandConfig", "RetargetConfig", "load_config", "load_hand_config", "NODE_NAMES", "RetargetInputError",
           "hand_frame", "validate_nodes", "webxr_to_nodes", "DEFAULT_PROFILE", "CalibrationSample",
           "OperatorProfile", "calibrate"]
