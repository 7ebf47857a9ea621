"""Normalization and comparison of desired and live objects, with ignoreDifferences. No I/O."""
