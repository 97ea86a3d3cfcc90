"""The simulation core: one control tick = ``substeps`` physics steps at the model's timestep.

Actions are 58 absolute joint targets in :attr:`RobotLayout.action_joints` order. Observations are
130 float32: 58 joint positions, 58 joint velocities, then per side (left, right) the wrist site's
position (3) and quaternion (4, w x y z).

Serialised state: float64 ``[MAGIC, VERSION, fp0, fp1, fp2, fp3, n, state(n)...]`` where
``state`` is ``mj_getState(mjSTATE_INTEGRATION)`` and fp0..fp3 are the model fingerprint in
16-bit chunks (exact in float64).
"""
from __future__ import annotations

from collections.abc import Callable

import mujoco
import numpy as np

from teleop.core.conventions import SIDES
from teleop.core.errors import StateMismatchError, TeleopError
from teleop.sim.scene import Scene

STATE_SPEC = mujoco.mjtState.mjSTATE_INTEGRATION
STATE_MAGIC = 7318.0      # marks a serialised state vector
STATE_VERSION = 1.0
HEADER = 7
ACTION_DIM = 58           # the shipped robot's RobotLayout.action_dim (a test ties the two together)
OBS_DIM = 130             # ... and its RobotLayout.obs_dim

ResetHook = Callable[[mujoco.MjModel, mujoco.MjData, int], None]


def _fingerprint_chunks(fp: str) -> list[float]:
    return [float(int(fp[i:i + 4], 16)) for i in range(0, 16, 4)]


def _chunks_to_fingerprint(chunks) -> str:
    return "".join(f"{int(c):04x}" for c in chunks)


class Sim:
    """Deterministic stepping, observation and exact state save/restore for one scene."""

    def __init__(self, scene: Scene, initial_qpos: dict[str, float] | None = None,
                 reset_hook: ResetHook | None = None):
        self.scene = scene
        self.model = scene.model
        self.data = mujoco.MjData(self.model)
        layout = scene.layout
        ids = [self.model.joint(n).id for n in layout.action_joints]
        self.qpos_idx = np.array([self.model.jnt_qposadr[i] for i in ids])
        self.qvel_idx = np.array([self.model.jnt_dofadr[i] for i in ids])
        self.act_idx = np.array([self.model.actuator(n).id for n in layout.action_joints])
        self.action_dim = layout.action_dim
        self.ee_sites = [self.model.site(layout.ee_sites[s]).id for s in SIDES]
        self.ctrl_low, self.ctrl_high = self.model.actuator_ctrlrange[self.act_idx].T.copy()
        self.initial_qpos = dict(initial_qpos if initial_qpos is not None
                                 else layout.ready_qpos(scene.params))
        self.reset_hook = reset_hook
        self.substeps = scene.substeps
        self.tick = 0
        self._state_size = mujoco.mj_stateSize(self.model, STATE_SPEC)

    # -- control -------------------------------------------------------------------------------
    def reset(self, seed: int = 0) -> np.ndarray:
        """Robot to its initial pose, objects placed by the reset hook (seeded), zero velocity."""
        mujoco.mj_resetData(self.model, self.data)
        for name, value in self.initial_qpos.items():
            self.data.qpos[self.model.joint(name).qposadr[0]] = value
        if self.reset_hook is not None:
            self.reset_hook(self.model, self.data, seed)
        self.data.ctrl[self.act_idx] = self.data.qpos[self.qpos_idx]
        mujoco.mj_forward(self.model, self.data)
        self.tick = 0
        return self.observation()

    def step(self, action: np.ndarray) -> np.ndarray:
        """Apply 58 joint targets (clipped to the joint ranges) for one control tick."""
        action = np.asarray(action, dtype=np.float64)
        if action.shape != (self.action_dim,):
            raise TeleopError(f"action must have shape ({self.action_dim},), got {action.shape}")
        if not np.all(np.isfinite(action)):
            raise TeleopError("action contains NaN or infinite values")
        self.data.ctrl[self.act_idx] = np.clip(action, self.ctrl_low, self.ctrl_high)
        mujoco.mj_step(self.model, self.data, nstep=self.substeps)
        # mj_step leaves body and site poses at the last substep's START: recompute them for the
        # state it ends in, so observations and predicates describe that state (the integration
        # state is untouched: the next mj_step recomputes the same quantities).
        mujoco.mj_kinematics(self.model, self.data)
        self.tick += 1
        return self.observation()

    @property
    def joint_positions(self) -> np.ndarray:
        return self.data.qpos[self.qpos_idx].copy()

    def observation(self) -> np.ndarray:
        """(130,) float32: qpos 58, qvel 58, left wrist pos+quat 7, right wrist pos+quat 7."""
        parts = [self.data.qpos[self.qpos_idx], self.data.qvel[self.qvel_idx]]
        for sid in self.ee_sites:
            quat = np.empty(4)
            mujoco.mju_mat2Quat(quat, self.data.site_xmat[sid])
            parts += [self.data.site_xpos[sid], quat]
        return np.concatenate(parts).astype(np.float32)

    # -- state ---------------------------------------------------------------------------------
    def get_state(self) -> np.ndarray:
        """The full integration state as a float64 vector carrying the model fingerprint."""
        out = np.empty(HEADER + self._state_size)
        out[:HEADER] = [STATE_MAGIC, STATE_VERSION, *_fingerprint_chunks(self.scene.fingerprint),
                        self._state_size]
        mujoco.mj_getState(self.model, self.data, out[HEADER:], STATE_SPEC)
        return out

    def set_state(self, state: np.ndarray) -> None:
        """Restore a vector from :meth:`get_state`; refuses states of any other model."""
        state = np.asarray(state, dtype=np.float64)
        if state.ndim != 1 or state.size < HEADER or state[0] != STATE_MAGIC:
            raise StateMismatchError("not a serialised simulator state (missing header)")
        if state[1] != STATE_VERSION:
            raise StateMismatchError(f"state format version {state[1]:g}, this build reads {STATE_VERSION:g}")
        fp = _chunks_to_fingerprint(state[2:6])
        if fp != self.scene.fingerprint:
            raise StateMismatchError(
                f"state was saved from model {fp}, but this simulator runs model {self.scene.fingerprint}: "
                "rebuild the scene from the take's model_file or the same task and robot parameters")
        if int(state[6]) != self._state_size or state.size != HEADER + self._state_size:
            raise StateMismatchError(f"state has {state.size - HEADER} values, model needs {self._state_size}")
        mujoco.mj_setState(self.model, self.data, state[HEADER:], STATE_SPEC)
        mujoco.mj_forward(self.model, self.data)


def state_fingerprint(state: np.ndarray) -> str:
    """The model fingerprint a serialised state was saved under."""
    return _chunks_to_fingerprint(np.asarray(state)[2:6])
