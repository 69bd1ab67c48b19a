# Figures of the paper's section 5 (and Kahn's algorithm), from results/summary.csv only
# (static_comparison, partition_ablation and kahn_bench from results/bench/*.csv when present), and the
# claims table. Inputs include the plotting module and its style (figure_style), so editing
# either re-renders without rerunning any experiment. One caption template serves every figure: it branches on
# params.figure (report/figures.rst). Which figures the default target asks for:
# default_targets() in common.smk.


rule claims:
    input:
        unpack(claims_bench_inputs),
        unpack(claims_peer_inputs),
        summary="results/summary.csv",
        runs=summary_inputs(),
        code=importlib.util.find_spec("dynpr.evaluation.claims").origin,
        rule_code=importlib.util.find_spec("dynpr.evaluation.verdicts").origin,
        peer_code=importlib.util.find_spec("dynpr.evaluation.peer_claims").origin,
    output:
        report("results/claims.csv", caption="../report/claims.rst", category="Claims"),
    log:
        "results/logs/claims.log",
    conda:
        "../envs/dynpr.yaml"
    script:
        "../scripts/claims.py"


rule plot_summary:
    input:
        summary="results/summary.csv",
        code=PLOTS_CODE,
    output:
        png=report("figures/{figure}.png", caption="../report/figures.rst", category=figure_category),
        pdf="figures/{figure}.pdf",
    log:
        "results/logs/figures/{figure}.log",
    wildcard_constraints:
        figure="|".join(SUMMARY_FIGURES),
    conda:
        "../envs/dynpr.yaml"
    params:
        figure=lambda wildcards: wildcards.figure,
    script:
        "../scripts/plot_summary.py"


rule plot_bench:
    input:
        bench=bench_inputs,
        code=PLOTS_CODE,
    output:
        png=report("figures/{figure}.png", caption="../report/figures.rst", category=figure_category),
        pdf="figures/{figure}.pdf",
    log:
        "results/logs/figures/{figure}.log",
    wildcard_constraints:
        figure="|".join(BENCH_FIGURES),
    conda:
        "../envs/dynpr.yaml"
    params:
        figure=lambda wildcards: wildcards.figure,
    script:
        "../scripts/plot_bench.py"


rule plot_temporal_per_batch:
    input:
        summary="results/summary.csv",
        code=PLOTS_CODE,
    output:
        png=report(
            "figures/temporal_per_batch_{dataset}.png",
            caption="../report/figures.rst",
            category="Temporal graphs",
            subcategory="{dataset}",
        ),
        pdf="figures/temporal_per_batch_{dataset}.pdf",
    log:
        "results/logs/figures/temporal_per_batch_{dataset}.log",
    conda:
        "../envs/dynpr.yaml"
    params:
        figure="temporal_per_batch",
    script:
        "../scripts/plot_summary.py"


rule plot_peers:
    input:
        peers=peer_targets(),
        code=PLOTS_CODE,
    output:
        png=report("figures/{figure}.png", caption="../report/figures.rst", category=figure_category),
        pdf="figures/{figure}.pdf",
    log:
        "results/logs/figures/{figure}.log",
    wildcard_constraints:
        figure="|".join(PEER_FIGURES),
    conda:
        "../envs/dynpr.yaml"
    params:
        figure=lambda wildcards: wildcards.figure,
    script:
        "../scripts/plot_peers.py"
