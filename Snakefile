# dynpr: the evaluation of seed 003 from public graph data to figures.
# `snakemake --cores 1 figures` is the main job; see README.md.

from snakemake.utils import min_version, validate

min_version("9.0")


configfile: "config.yaml"


validate(config, "workflow/schemas/config.schema.yaml")


include: "workflow/rules/common.smk"
include: "workflow/rules/datasets.smk"
include: "workflow/rules/batches.smk"
include: "workflow/rules/experiments.smk"
include: "workflow/rules/figures.smk"
include: "workflow/rules/bench.smk"


rule figures:
    default_target: True
    input:
        figure_targets(),
