"""Running kernels: devices, targets, argument marshaling, build and launch (see api.py)."""
