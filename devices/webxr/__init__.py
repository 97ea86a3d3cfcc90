"""WebXR headset device: HTTPS + secure websocket server, the page (static/) and its protocol."""
from devices.webxr.device import WebXRConfig, WebXRDevice

__all__ = ["WebXRConfig", "WebXRDevice"]
