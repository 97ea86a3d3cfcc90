"""The operator desktop application (PyQt6): wiring only; the logic lives in the packages below."""
