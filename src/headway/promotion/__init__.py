"""Promotion: move an image through a pipeline's environments by commits, behind gates that
fail closed (docs/promotion.md)."""
