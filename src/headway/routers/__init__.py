"""Traffic routers, one module each behind the `TrafficRouter` protocol."""
