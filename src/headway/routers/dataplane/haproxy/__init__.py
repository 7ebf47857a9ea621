"""The HAProxy router: Debian's HAProxy as the data plane.

`config` writes the configuration HAProxy starts with, `runtime` runs it and speaks its
runtime API over the admin socket, and `router` drives weights and endpoints through it.
"""
