# dynpr: the evaluation of seed 003 from public graph data to figures.
# `snakemake --cores 1 figures` is the main job; see README.md.

from snakemake.utils import min_version, validate

min_version("9.0")


configfile: "config.yaml"


def _check_config_values():
    import yaml
    from snakemake.exceptions import WorkflowError

    from dynpr.errors import InputError
    from dynpr.validate import check_config_values

    with open("workflow/schemas/config.schema.yaml") as fh:
        schema = yaml.safe_load(fh)
    try:
        check_config_values(config, schema, "config")
    except InputError as err:
        raise WorkflowError(f"dynpr: {err}") from None


validate(config, "workflow/schemas/config.schema.yaml")
# what the schema cannot say: no NaN or infinity, no 2.0 where an integer belongs
_check_config_values()


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
