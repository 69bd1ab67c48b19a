"""Graph data in and out: file readers, downloads, the dataset catalog, preparing graphs, rank tables."""
