"""The ``teleop`` command: ``main.py`` builds the parser from ``commands/``; ``benches/`` holds
``teleop bench NAME``."""
