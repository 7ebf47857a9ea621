"""Typed views of manifests: parsing with line numbers, validation, durations, selectors. No I/O."""
