"""Kubernetes semantics every layer shares, pure: pod-template hashing, surge and
unavailability arithmetic. No I/O and no backend: controllers and the local runtime both
use it, so neither needs the other."""
