"""The operator's keys, bound to flow actions, working whatever widget of the window has focus.

Window shortcuts already beat buttons, lists, tables and sliders. A text field is the exception:
Qt lets it claim printable keys, so Space would type into the episode filter instead of
recording. :class:`TextFieldGuard` takes the keys an operator presses without looking (Space,
Ctrl+Z) away from text fields of this window; letters, digits and arrows still type there, so
the filter stays usable. Dialogs (their own windows) are left alone.
"""
from __future__ import annotations

from PyQt6.QtCore import QEvent, QObject, Qt
from PyQt6.QtGui import QKeySequence, QShortcut
from PyQt6.QtWidgets import QAbstractSpinBox, QLineEdit, QPlainTextEdit, QTextEdit, QWidget

# (key, action, argument, label for the help line)
KEYMAP = (("Space", "record", None, "record / stop"), ("A", "accept", None, "accept"),
          ("R", "reject", None, "reject (then 1-7)"), ("Ctrl+Z", "undo", None, "undo verdict"),
          ("Left", "rerecord", None, "re-record"), ("Right", "end_early", None, "end early"),
          ("Backspace", "back", None, "back 3 s"), ("C", "continue", None, "continue from here"),
          ("N", "next", None, "next episode"), ("P", "play", None, "play / pause"),
          ("E", "engage", None, "engage"), ("Esc", "live", None, "back to live"),
          ("]", "faster", None, "faster"), ("[", "slower", None, "slower"),
          *((str(i), "reason", i, "") for i in range(1, 10)))
# key -> (modifiers, action): taken from text fields too
ALWAYS = {Qt.Key.Key_Space.value: (Qt.KeyboardModifier.NoModifier, "record"),
          Qt.Key.Key_Z.value: (Qt.KeyboardModifier.ControlModifier, "undo")}
TEXT_WIDGETS = (QLineEdit, QPlainTextEdit, QTextEdit, QAbstractSpinBox)


def help_line() -> str:
    return "  ".join(f"{key} {label}" for key, _, _, label in KEYMAP if label)


def bind_keys(window: QWidget, trigger) -> list[QShortcut]:
    """One window shortcut per key, each calling ``trigger(action, arg)``."""
    shortcuts = []
    for key, action, arg, _ in KEYMAP:
        shortcut = QShortcut(QKeySequence(key), window)
        shortcut.setContext(Qt.ShortcutContext.WindowShortcut)
        shortcut.activated.connect(lambda a=action, x=arg: trigger(a, x))
        shortcuts.append(shortcut)
    return shortcuts


def _action_of(event) -> str | None:
    mods = event.modifiers() & ~Qt.KeyboardModifier.KeypadModifier
    wanted, action = ALWAYS.get(int(event.key()), (None, None))
    return action if action is not None and mods == wanted else None


class TextFieldGuard(QObject):
    """Event filter on the window's text fields (not on the whole application: every event of
    every widget would cross into Python): Space and Ctrl+Z there run the operator action
    instead of editing the text. Dialogs are other windows and keep their keys."""

    def __init__(self, window: QWidget, trigger):
        super().__init__(window)
        self.window, self.trigger = window, trigger
        self.fields: list[QWidget] = []
        for kind in TEXT_WIDGETS:
            for widget in window.findChildren(kind):
                widget.installEventFilter(self)
                self.fields.append(widget)

    def eventFilter(self, obj, event) -> bool:  # noqa: N802 (Qt naming)
        kind = event.type()
        if kind != QEvent.Type.ShortcutOverride and kind != QEvent.Type.KeyPress:
            return False
        action = _action_of(event)
        if action is None:
            return False
        if kind == QEvent.Type.KeyPress:     # the shortcut did not fire: run the action here
            self.trigger(action, None)
        return True                          # the text field never sees the key

    def remove(self) -> None:
        for widget in self.fields:
            try:
                widget.removeEventFilter(self)
            except RuntimeError:             # already deleted with its parent
                pass
