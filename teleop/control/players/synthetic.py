"""The ``synthetic`` device: a scripted operator planned from the reset scene of the episode."""
from __future__ import annotations

from dataclasses import dataclass, field

from devices.config import DeviceConfig, DeviceContext
from devices.synthetic import SyntheticOperator
from teleop.control.synthetic.human import HumanNoise
from teleop.control.synthetic.operator import synthetic_device
from teleop.core.errors import ConfigError

_NOISE = HumanNoise()


@DeviceConfig.register_subclass("synthetic")
@dataclass(frozen=True, kw_only=True)
class SyntheticConfig(DeviceConfig):
    label = "Synthetic operator (scripted)"
    menu_order = 0                # first: works on any machine, no hardware
    realtime = False              # lock-step by default: as fast as the loop runs, deterministic
    per_episode = True            # planned from one episode's reset scene
    tremor_mm: float = field(default=_NOISE.tremor_mm, metadata={"help": "hand tremor amplitude (mm)"})
    keypoint_mm: float = field(default=_NOISE.keypoint_mm, metadata={"help": "per-node tracking noise (mm)"})
    dropout_per_s: float = field(default=_NOISE.dropout_per_s, metadata={"help": "tracking dropouts per second"})

    def build(self, context: DeviceContext) -> SyntheticOperator:
        if context.runtime is None or context.retargeter is None:
            raise ConfigError("the synthetic operator plans from a task episode: choose a task first")
        realtime = self.realtime if context.realtime is None else context.realtime
        noise = HumanNoise(tremor_mm=self.tremor_mm, keypoint_mm=self.keypoint_mm, dropout_per_s=self.dropout_per_s)
        return synthetic_device(context.runtime, context.retargeter, seed=context.episode_index,
                                clock="realtime" if realtime else "lockstep", noise=noise)
