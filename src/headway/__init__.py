"""Headway: a GitOps reconciler and progressive-delivery controller in one program."""

__version__ = "0.1.0"
