"""WebXR headset device: HTTPS + secure websocket server, the page (static/) and its protocol."""
from devices.webxr.device import WebXRDevice, pairing_qr

__all__ = ["WebXRDevice", "pairing_qr"]
