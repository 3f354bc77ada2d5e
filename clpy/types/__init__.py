"""clpy's type objects."""
