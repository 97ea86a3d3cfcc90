"""The application layer: the control loop (session), episodes, publishing to devices, the
synthetic operator and the demo. Imports the foundation, ``devices``, ``retarget`` and
``recordings``; nothing below it imports it."""
