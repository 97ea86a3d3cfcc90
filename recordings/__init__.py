"""Takes (crash-safe recording, HDF5 files), their index, replay, validation and export."""
