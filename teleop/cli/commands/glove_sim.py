"""``teleop glove-sim``: publish a realistic glove stream and print the haptic feedback received."""
from __future__ import annotations

import time

import numpy as np

from teleop.core.errors import TeleopError


def run_glove_sim(args, out=print) -> dict:
    """Publish at ``args.rate`` Hz for ``args.duration`` s (0 = until Ctrl-C); returns counters."""
    import zmq

    from devices.glove import GloveLink
    from devices.glove_motion import GloveMotion

    if not args.rate > 0:
        raise TeleopError(f"--rate must be > 0 Hz, got {args.rate}")
    motion = GloveMotion(period=args.period, engage_after=args.engage_after,
                         tracker=not args.no_tracker, seed=args.seed)
    try:
        link = GloveLink(args.bind, args.haptics)
    except zmq.ZMQError as exc:
        raise TeleopError(f"glove-sim: cannot bind {args.bind} / connect {args.haptics}: {exc}") from exc
    out(f"glove-sim: publishing on {link.endpoint} at {args.rate:g} Hz, "
        f"haptics from {args.haptics or '(off)'}")
    counts = {"sent": 0, "haptic_packets": 0}
    start = time.monotonic()
    next_print = start
    try:
        while not args.duration or time.monotonic() - start < args.duration:
            t = time.monotonic() - start
            link.send(counts["sent"], t, motion.hands(t), motion.engaged(t))
            counts["sent"] += 1
            packets = link.recv_haptics(0.0)
            counts["haptic_packets"] += len(packets)
            if packets and time.monotonic() >= next_print:
                _print_haptics(packets[-1], out)
                next_print = time.monotonic() + args.print_every
            # Absolute schedule so the rate does not drift with send/print time.
            time.sleep(max(0.0, start + counts["sent"] / args.rate - time.monotonic()))
    except KeyboardInterrupt:
        pass
    finally:
        link.close()
    counts["haptic_dropped"] = link.haptic_drops.snapshot()
    out(f"glove-sim: sent {counts['sent']} packets, received {counts['haptic_packets']} haptic "
        f"packets, dropped {counts['haptic_dropped']}")
    return counts


def _print_haptics(packet, out) -> None:
    f = np.round(packet.forces, 2)
    out(f"haptics #{packet.sequence}: left {f[0].tolist()} N, right {f[1].tolist()} N")


def register(subparsers) -> None:
    p = subparsers.add_parser("glove-sim", help="publish a simulated exoskeleton-glove stream",
                              description=__doc__)
    p.add_argument("--bind", default="tcp://*:5570", help="glove PUB address (default %(default)s)")
    p.add_argument("--haptics", default="tcp://127.0.0.1:5571",
                   help="the app's haptic PUB to connect to; '' disables (default %(default)s)")
    p.add_argument("--rate", type=float, default=100.0, help="packets per second (default 100)")
    p.add_argument("--duration", type=float, default=0.0, help="seconds; 0 runs until Ctrl-C")
    p.add_argument("--period", type=float, default=4.0, help="grasp/release cycle (s)")
    p.add_argument("--engage-after", type=float, default=1.0, help="press the engage button after (s)")
    p.add_argument("--no-tracker", action="store_true", help="send no wrist poses")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--print-every", type=float, default=1.0, help="seconds between haptic prints")
    p.set_defaults(func=lambda args: 0 if run_glove_sim(args) else 1)
