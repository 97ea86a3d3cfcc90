"""``WebXRDevice``: any WebXR headset with hand tracking (Apple Vision Pro, Quest) as a Device."""
from __future__ import annotations

import io

from devices.base import Device, LatestFrame, Reading, register_device
from devices.webxr.server import HeadsetServer


@register_device("webxr")
class WebXRDevice(Device):
    """Serves the headset page and reads its hand / head stream.

    Options: ``host`` / ``port`` (0 picks a free port), ``config_dir`` (certificate folder;
    default the user's config dir), ``pairing_code`` (default: a fresh random code),
    ``stale_after`` (s). Scene, poses and HUD go to the page with ``publish_*``.
    """

    def __init__(self, host: str = "0.0.0.0", port: int = 8443, config_dir=None,
                 pairing_code: str | None = None, stale_after: float = 0.15):
        self._slot = LatestFrame(stale_after)
        self.server = HeadsetServer(host, port, config_dir, pairing_code, self._slot.put,
                                    device_name="webxr")

    def connect(self) -> None:
        self.server.start()

    def read(self) -> Reading:
        return self._slot.get()

    def close(self) -> None:
        self.server.stop()

    @property
    def is_connected(self) -> bool:
        return self.server.running

    @property
    def pairing_code(self) -> str:
        return self.server.pairing_code

    def page_url(self, host: str | None = None, emulate: bool = False) -> str:
        return self.server.page_url(host, emulate)

    def publish_scene(self, geoms, world_to_operator=(0.0, 0.0, 0.0)) -> None:
        self.server.publish_scene(geoms, world_to_operator)

    def publish_poses(self, poses, seq: int | None = None) -> None:
        self.server.publish_poses(poses, seq)

    def publish_hud(self, hud: dict) -> None:
        self.server.publish_hud(hud)

    def stats(self) -> dict:
        return {**self.server.stats(), "accepted_frames": self._slot.accepted}

    def banner(self, host: str | None = None) -> str:
        """Text for a terminal / log: URL with the pairing code, QR code, certificate fingerprint."""
        url = self.page_url(host)
        cert = self.server.cert
        return (f"Headset page: {url}\n{pairing_qr(url)}"
                f"certificate SHA-256 {cert.fingerprint if cert else '(not created yet)'}\n")


def pairing_qr(url: str) -> str:
    """The URL as a terminal QR code (the UI can render ``qrcode`` images instead)."""
    import qrcode
    qr = qrcode.QRCode(border=1)
    qr.add_data(url)
    out = io.StringIO()
    qr.print_ascii(out=out, invert=True)
    return out.getvalue()
