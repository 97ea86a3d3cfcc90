"""``python -m devices.webxr``: run the headset server alone with a demo scene (try a headset
without the control loop): prints the URL, QR code and certificate fingerprint, streams a
moving cube and a HUD, and reports the hand frames it receives once a second."""
from __future__ import annotations

import argparse
import math
import time

from devices.frame import SIDES
from devices.webxr.device import WebXRDevice
from teleop.robot import default_control_hz

DEMO_GEOMS = [
    {"name": "floor", "body": "world", "type": "plane", "size": [2, 2, 0.1], "rgba": [0.3, 0.32, 0.35, 1]},
    {"name": "table", "body": "world", "type": "box", "size": [0.35, 0.55, 0.02],
     "rgba": [0.62, 0.5, 0.38, 1], "pos": [0.55, 0, 0.76]},
    {"name": "cube", "body": "cube", "type": "box", "size": [0.03, 0.03, 0.03], "rgba": [0.9, 0.2, 0.2, 1]},
]


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m devices.webxr", description=__doc__)
    p.add_argument("--host", default="0.0.0.0")
    p.add_argument("--port", type=int, default=8443)
    p.add_argument("--config-dir", default=None, help="certificate folder (default ~/.config/bidex-teleop)")
    p.add_argument("--url-host", default=None, help="address the headset should use (default: LAN IP)")
    p.add_argument("--new-pairing-code", action="store_true",
                   help="replace the kept pairing code (every headset must scan the new QR code)")
    p.add_argument("--duration", type=float, default=0.0, help="seconds; 0 runs until Ctrl-C")
    args = p.parse_args(argv)
    dev = WebXRDevice(args.host, args.port, args.config_dir, new_pairing_code=args.new_pairing_code)
    with dev:
        print(dev.banner(args.url_host), flush=True)
        # Raise the world 0.2 m so the 0.78 m table top sits near a standing operator's waist.
        dev.publish_scene(DEMO_GEOMS, world_to_operator=(0.0, 0.0, 0.2))
        tick = 1.0 / default_control_hz()
        start = last = time.monotonic()
        frames_at_last = 0
        try:
            while not args.duration or time.monotonic() - start < args.duration:
                t = time.monotonic() - start
                dev.publish_poses({"cube": [0.55 + 0.1 * math.sin(t), 0.15 * math.cos(t), 0.83, 1, 0, 0, 0]})
                if time.monotonic() - last >= 1.0:
                    stats = dev.stats()
                    reading = dev.read()
                    hands = [s for s in SIDES if reading.frame and reading.frame.hand(s)]
                    dev.publish_hud({"instruction": "Demo: move your hands", "recording": False,
                                     "subtasks": [{"name": f"{s} hand tracked", "done": s in hands}
                                                  for s in SIDES],
                                     "status": f"{stats['frames'] - frames_at_last} frames/s"})
                    print(f"clients {stats['clients']}  frames/s {stats['frames'] - frames_at_last}  "
                          f"hands {hands}  age {reading.age * 1000:.0f} ms  dropped {stats['dropped']}",
                          flush=True)
                    frames_at_last, last = stats["frames"], time.monotonic()
                time.sleep(tick)                  # publish at the app's control rate
        except KeyboardInterrupt:
            pass
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
