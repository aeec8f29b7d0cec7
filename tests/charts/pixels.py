"""Reading a chart back: the PNG decoded, and where a time and a value fall on it, taken from the
figure's own axes (so a test checks the picture, not the code that placed things on it)."""

from __future__ import annotations

import io

from matplotlib.colors import to_rgb
from PIL import Image

from edge.charts.draw import DAY, chart_figure, png_bytes


def rgb(image: Image.Image, xy: tuple[float, float]) -> tuple[int, int, int]:
    r, g, b = image.getpixel((round(xy[0]), round(xy[1])))[:3]
    return r, g, b


def near(pixel: tuple[int, int, int], colour: str, tolerance: int = 40) -> bool:
    target = [round(c * 255) for c in to_rgb(colour)]
    return all(abs(p - t) <= tolerance for p, t in zip(pixel, target, strict=True))


class Drawn:
    """The PNG decoded, and where a time and a value fall on it (from the figure's own axes)."""

    def __init__(self, series, tracks):
        self.figure = chart_figure(series, tracks)
        self.png = png_bytes(self.figure)
        self.image = Image.open(io.BytesIO(self.png)).convert("RGB")

    def at(self, axes: int, when: float, value: float) -> tuple[float, float]:
        x, y = self.figure.axes[axes].transData.transform((when / DAY, value))
        return x, self.image.height - y

    def column(self, axes: int, when: float) -> list[tuple[int, int, int]]:
        """The pixels of one time across a panel, top to bottom (inside its frame)."""
        box = self.figure.axes[axes].get_window_extent()
        x = self.figure.axes[axes].transData.transform((when / DAY, 0))[0]
        top, bottom = self.image.height - box.y1 + 3, self.image.height - box.y0 - 3
        return [rgb(self.image, (x, y)) for y in range(round(top), round(bottom))]
