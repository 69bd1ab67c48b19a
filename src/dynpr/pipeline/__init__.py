"""What the Snakemake jobs share: job helpers, file steps, device claims and the memory model."""
