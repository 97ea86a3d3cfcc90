"""The bimanual embodiment: two FR3 arms with 22-DoF hands, built procedurally with MjSpec."""
from teleop.robot.builder import SIDES, WORLD_COLLISION, RobotLayout, build_robot_spec
from teleop.robot.hand import ROBOT_BITS
from teleop.robot.params import DEFAULT_PARAMS, RobotParams, default_control_hz, default_params, load_params

__all__ = ["SIDES", "WORLD_COLLISION", "ROBOT_BITS", "RobotLayout", "build_robot_spec", "DEFAULT_PARAMS",
           "RobotParams", "default_control_hz", "default_params", "load_params"]
