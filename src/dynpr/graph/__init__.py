"""The graph type, its storage and the checks every input passes; host memory accounting."""
