"""``WebXRDevice``: any WebXR headset with hand tracking (Apple Vision Pro, Quest) as a Device."""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from devices.base import ActionQueue, ConnectionInfo, Device, LatestFrame, Reading
from devices.config import DeviceConfig, DeviceContext
from devices.webxr.server import HeadsetServer

DEVICE_NAME = "webxr"


@DeviceConfig.register_subclass(DEVICE_NAME)
@dataclass(frozen=True, kw_only=True)
class WebXRConfig(DeviceConfig):
    label = "Headset (WebXR: Vision Pro, Quest…)"
    menu_order = 2
    horizon_from_engage = True      # the operator puts the headset on first: time starts at engage
    host: str = field(default="0.0.0.0", metadata={"help": "address to serve on"})
    port: int = field(default=8443, metadata={"help": "HTTPS/WSS port (0 picks a free one)"})
    pairing_code: str | None = field(default=None, metadata={
        "help": "fixed pairing code (default: the one kept in the config dir, made on first use)"})
    new_pairing_code: bool = field(default=False, metadata={
        "help": "replace the kept pairing code with a new one (every headset must re-pair)"})
    config_dir: Path | None = field(default=None, metadata={"help": "certificate folder (default: the user's)"})
    stale_after: float = field(default=0.15, metadata={"help": "seconds after which a frame is stale"})

    def build(self, context: DeviceContext) -> WebXRDevice:
        return WebXRDevice(self.host, self.port, self.config_dir, self.pairing_code, self.stale_after,
                           new_pairing_code=self.new_pairing_code)


class WebXRDevice(Device):
    """Serves the headset page and reads its hand / head stream.

    Options: ``host`` / ``port`` (0 picks a free port), ``config_dir`` (certificate folder;
    default the user's config dir), ``pairing_code`` (default: the code kept in the config dir,
    so a restarted app pairs with the same headset page; ``new_pairing_code`` replaces it),
    ``stale_after`` (s). Scene, poses and HUD go to the page with ``publish_*``.
    """

    def __init__(self, host: str = "0.0.0.0", port: int = 8443, config_dir=None,
                 pairing_code: str | None = None, stale_after: float = 0.15, new_pairing_code: bool = False):
        self._slot = LatestFrame(stale_after)
        self._actions = ActionQueue()             # HUD buttons pinched, from the server thread
        self.server = HeadsetServer(host, port, config_dir, pairing_code, self._slot.put,
                                    device_name=DEVICE_NAME, new_pairing_code=new_pairing_code,
                                    on_action=self._actions.put)

    def connect(self) -> None:
        self.server.start()

    def read(self) -> Reading:
        return self._slot.get()

    def take_actions(self) -> list[tuple[str, object]]:
        return self._actions.take()

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

    def publish_scene(self, geoms, world_to_operator=(0.0, 0.0, 0.0), hud_anchor=None) -> None:
        self.server.publish_scene(geoms, world_to_operator, hud_anchor)

    def publish_poses(self, poses, seq: int | None = None) -> None:
        self.server.publish_poses(poses, seq)

    def publish_hud(self, hud: dict) -> None:
        self.server.publish_hud(hud)

    def stats(self) -> dict:
        return {**self.server.stats(), "accepted_frames": self._slot.accepted}

    def connection_info(self, host: str | None = None) -> ConnectionInfo:
        """The page URL (the port the server really listens on), pairing code, certificate."""
        if not self.is_connected:
            return ConnectionInfo(f"headset server not running (port {self.server.requested_port})")
        cert = self.server.cert
        return ConnectionInfo(f"headset server on {self.server.host}:{self.server.port}", url=self.page_url(host),
                              pairing_code=self.pairing_code, fingerprint=cert.fingerprint if cert else "")

    def banner(self, host: str | None = None) -> str:
        """Text for a terminal / log: URL with the pairing code, QR code, certificate fingerprint."""
        return self.connection_info(host).banner()
