"""Device configs bound to an episode: the synthetic operator (plans from the reset scene) and the
replay of a take's operator stream. Their players (``devices.synthetic``, ``devices.replay``) know
nothing about tasks; these modules bind them to one, so they live in the control layer."""
from devices.config import DeviceConfig, discover


def load_devices() -> dict[str, type[DeviceConfig]]:
    """Every device config: the device modules and the episode-bound players."""
    return discover("devices", "teleop.control.players")
