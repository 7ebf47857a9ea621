"""Step-function controllers wiring the pure cores to the cluster, sources and providers."""
