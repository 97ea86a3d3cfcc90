"""``teleop bench NAME [--json]``: run a benchmark module from :mod:`teleop.cli.benches`."""
from __future__ import annotations

import importlib
import json
import pkgutil

import teleop.cli.benches


def _benches() -> dict[str, object]:
    modules = (importlib.import_module(f"teleop.cli.benches.{i.name}")
               for i in pkgutil.iter_modules(teleop.cli.benches.__path__))
    return {m.NAME: m for m in modules}


def register(sub) -> None:
    parser = sub.add_parser("bench", help="run a benchmark and print its figures")
    bench_sub = parser.add_subparsers(dest="bench", metavar="NAME", required=True)
    for name, module in sorted(_benches().items()):
        p = bench_sub.add_parser(name, help=(module.__doc__ or "").strip().splitlines()[0])
        p.add_argument("--json", action="store_true", help="print only the JSON figures")
        if hasattr(module, "add_arguments"):
            module.add_arguments(p)
        p.set_defaults(func=lambda args, m=module: _run(m, args))


def _run(module, args) -> int:
    figures = module.run(args)
    print(json.dumps(figures) if args.json else json.dumps(figures, indent=2))
    return 0
