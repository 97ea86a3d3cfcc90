"""The mode banner over the 3-D view: where the operator's eyes are, so they never need to read a
dock to know whether they are recording. LIVE / RECORDING / REVIEW in large type, elapsed and
remaining time, the auto-stop countdown, the task's count and the next key to press."""
from __future__ import annotations

from dataclasses import dataclass

from PyQt6.QtCore import QRectF, Qt
from PyQt6.QtGui import QColor, QFont, QPainter

COLOURS = {"LIVE": "#2e7d32", "STARTING": "#f9a825", "RECORDING": "#c62828", "FINISHING": "#f9a825",
           "REVIEW": "#1565c0", "LOOP STOPPED": "#6a1b9a"}


@dataclass(frozen=True)
class Overlay:
    mode: str
    line: str = ""           # times: "12.4 s  ·  17.6 s left"
    detail: str = ""         # countdown / count / what to press

    @property
    def colour(self) -> str:
        return COLOURS.get(self.mode, "#424242")


def overlay_for(mode: str, snap, review=None, accepted: int = 0, target: int = 0, loop_problem: str = "") -> Overlay:
    """The banner for the window's state (``review``: the ReviewController while reviewing)."""
    count = f"accepted {accepted}/{target}" if target else ""
    if loop_problem:
        return Overlay("LOOP STOPPED", loop_problem, "restarting the control loop…")
    if mode == "REVIEW" and review is not None and review.take is not None:
        hz = review.take.meta.control_hz
        line = f"{review.tick / hz:.1f} / {review.take.length / hz:.1f} s  ·  {review.speed:g}×" + \
            (f"  ·  {count}" if count else "")
        return Overlay("REVIEW", line, "A accept  ·  R reject  ·  ← re-record  ·  C continue")
    if mode == "RECORDING":
        line = f"● {snap.elapsed_s:.1f} s"
        if snap.remaining_s is not None:
            line += f"  ·  {snap.remaining_s:.0f} s left"
        detail = f"done — stopping in {snap.stopping_in_s:.1f} s" if snap.stopping_in_s is not None else \
            "→ end early  ·  ← re-record  ·  ⌫ back 3 s"
        return Overlay("RECORDING", line, detail)
    if mode in ("STARTING", "FINISHING"):
        return Overlay(mode, "", "one moment…")
    if not snap.connected:
        return Overlay("LIVE", "no device", "connect a device in the Device panel")
    hint = "Space records (the script starts with the take)" if snap.armed else "Space records"
    return Overlay("LIVE", f"episode {snap.episode_index}" + (f"  ·  {count}" if count else ""), hint)


def paint_overlay(painter: QPainter, rect, overlay: Overlay) -> None:
    """A translucent band along the top of ``rect``."""
    height = max(56, min(96, rect.height() // 7))
    band = QRectF(rect.left(), rect.top(), rect.width(), height)
    painter.fillRect(band, QColor(0, 0, 0, 150))
    title = QFont()
    title.setPixelSize(int(height * 0.55))
    title.setBold(True)
    painter.setFont(title)
    painter.setPen(QColor(overlay.colour).lighter(150))
    left = QRectF(band.left() + 14, band.top(), band.width() * 0.45, band.height())
    painter.drawText(left, Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft, overlay.mode)
    small = QFont()
    small.setPixelSize(max(12, int(height * 0.24)))
    painter.setFont(small)
    painter.setPen(QColor("#ffffff"))
    right = QRectF(band.left() + band.width() * 0.32, band.top() + 4, band.width() * 0.68 - 14, band.height() / 2)
    painter.drawText(right, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, overlay.line)
    lower = QRectF(right.left(), band.top() + band.height() / 2, right.width(), band.height() / 2 - 4)
    painter.drawText(lower, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, overlay.detail)
