"""The mode banner over the 3-D view: where the operator's eyes are, so they never need to read a
dock to know whether they are recording. LIVE / RECORDING / REVIEW in large type, elapsed and
remaining time, the auto-stop countdown, the task's count and the next key to press."""
from __future__ import annotations

from dataclasses import dataclass

from PyQt6.QtCore import QRectF, Qt
from PyQt6.QtGui import QColor, QFont, QFontMetrics, QPainter

COLOURS = {"LIVE": "#2e7d32", "STARTING": "#f9a825", "RECORDING": "#c62828", "FINISHING": "#f9a825",
           "REVIEW": "#1565c0", "LOOP STOPPED": "#6a1b9a"}
TITLE_SHARE = 0.45       # the mode word takes at most this share of the band; the times get the rest
MARGIN = 14              # px between the band's edges, the mode word and the text


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
    """A translucent band along the top of ``rect``: the mode on the left, the two lines of text
    right-aligned in what is left of it (elided, never drawn over the mode)."""
    height = max(56, min(96, rect.height() // 7))
    band = QRectF(rect.left(), rect.top(), rect.width(), height)
    painter.fillRect(band, QColor(0, 0, 0, 150))
    title = QFont()
    title.setPixelSize(int(height * 0.55))
    title.setBold(True)
    title_width = QFontMetrics(title).horizontalAdvance(overlay.mode)
    if title_width > band.width() * TITLE_SHARE:          # a narrow view: a smaller mode word
        title.setPixelSize(max(12, int(title.pixelSize() * band.width() * TITLE_SHARE / title_width)))
        title_width = QFontMetrics(title).horizontalAdvance(overlay.mode)
    painter.setFont(title)
    painter.setPen(QColor(overlay.colour).lighter(150))
    left = QRectF(band.left() + MARGIN, band.top(), title_width + 1, band.height())
    painter.drawText(left, Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft, overlay.mode)
    small = QFont()
    small.setPixelSize(max(12, int(height * 0.24)))
    painter.setFont(small)
    painter.setPen(QColor("#ffffff"))
    x0 = left.right() + 2 * MARGIN
    width = max(0.0, band.right() - MARGIN - x0)
    metrics = QFontMetrics(small)
    for row, text in enumerate((overlay.line, overlay.detail)):
        box = QRectF(x0, band.top() + 4 + row * (band.height() / 2 - 4), width, band.height() / 2 - 4)
        shown = metrics.elidedText(text, Qt.TextElideMode.ElideLeft, int(width))
        painter.drawText(box, Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter, shown)
