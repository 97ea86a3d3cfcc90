"""The mode banner over the 3-D view: in a narrow view the mode word and the two text lines never
overlap (the text is elided instead), and every mode has a colour of its own."""
import numpy as np
import pytest
from PyQt6.QtGui import QImage, QPainter

from ui.overlay import COLOURS, Overlay, paint_overlay

LINE = "12.3 / 45.6 s  ·  1×  ·  accepted 12/100"
DETAIL = "A accept  ·  R reject  ·  ← re-record  ·  C continue"


def _paint(width: int, overlay: Overlay) -> np.ndarray:
    image = QImage(width, 400, QImage.Format.Format_RGB888)
    image.fill(0)
    painter = QPainter(image)
    paint_overlay(painter, image.rect(), overlay)
    painter.end()
    ptr = image.constBits()
    ptr.setsize(image.sizeInBytes())
    # copied: the QImage (and the memory under constBits) is freed when this function returns
    return np.frombuffer(ptr, np.uint8).reshape(400, image.bytesPerLine())[:, :3 * width].reshape(400, width, 3).copy()


@pytest.mark.parametrize("width", [320, 420, 720, 1200])
def test_the_mode_word_and_the_text_never_overlap(qapp, width):
    pixels = _paint(width, Overlay("RECORDING", LINE, DETAIL)).astype(int)
    white = np.all(pixels > 200, axis=2)                               # the text lines
    red_title = (pixels[..., 0] > 150) & (pixels[..., 1] < 150)        # the mode word (light red)
    assert white.any() and red_title.any()
    title_cols, text_cols = np.flatnonzero(red_title.any(0)), np.flatnonzero(white.any(0))
    assert title_cols.max() < text_cols.min(), f"{width} px: the text runs into the mode word"


def test_every_flow_mode_has_its_own_colour():
    modes = ("LIVE", "STARTING", "RECORDING", "FINISHING", "REVIEW", "LOOP STOPPED")
    assert len({Overlay(m).colour for m in modes}) == len(modes) - 1   # STARTING and FINISHING share amber
    assert set(modes) <= set(COLOURS)
