"""Generated graphs: R-MAT (host and GPU share one counter stream) and the Kahn report's random DAGs."""
