"""The local kubelet: every Pod in the store runs as real processes on this machine.

`pods` syncs Pods with processes, `pod_launch` runs one container step (start, probe,
back off, restart), `containers`, `probes`, `lifecycle` and `restart_backoff` hold one
container's state, `podenv`, `volumes` and `volume_files` build what a process sees,
`images` maps images to commands (the runtime config), `processes` starts and stops them,
and `network`/`pod_ports` hand out loopback ports. It reads and writes Pods only through
the `Cluster` protocol and knows nothing of the controllers that create them.
"""
