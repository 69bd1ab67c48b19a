# Figures of seed 003, section 5 (and seed 002's Kahn), from results/summary.csv only
# (static_comparison and partition_ablation from results/bench/*.csv when present).
# Inputs include the plotting module, so editing plots re-renders without rerunning any experiment.


rule plot_temporal_runtime_error:
    input:
        summary="results/summary.csv",
        code=PLOTS_CODE,
    output:
        png=report("figures/temporal_runtime_error.png", caption="../report/temporal_runtime_error.rst", category="Temporal graphs"),
        pdf="figures/temporal_runtime_error.pdf",
    params:
        figure="temporal_runtime_error",
    log:
        "results/logs/figures/temporal_runtime_error.log",
    script:
        "../scripts/plot_summary.py"


rule plot_random_runtime:
    input:
        summary="results/summary.csv",
        code=PLOTS_CODE,
    output:
        png=report("figures/random_runtime.png", caption="../report/random_runtime.rst", category="Random batches"),
        pdf="figures/random_runtime.pdf",
    params:
        figure="random_runtime",
    log:
        "results/logs/figures/random_runtime.log",
    script:
        "../scripts/plot_summary.py"


rule plot_random_error:
    input:
        summary="results/summary.csv",
        code=PLOTS_CODE,
    output:
        png=report("figures/random_error.png", caption="../report/random_error.rst", category="Random batches"),
        pdf="figures/random_error.pdf",
    params:
        figure="random_error",
    log:
        "results/logs/figures/random_error.log",
    script:
        "../scripts/plot_summary.py"


rule plot_gpu_vs_cpu:
    input:
        summary="results/summary.csv",
        code=PLOTS_CODE,
    output:
        png=report("figures/gpu_vs_cpu.png", caption="../report/gpu_vs_cpu.rst", category="GPU vs CPU"),
        pdf="figures/gpu_vs_cpu.pdf",
    params:
        figure="gpu_vs_cpu",
    log:
        "results/logs/figures/gpu_vs_cpu.log",
    script:
        "../scripts/plot_summary.py"


rule plot_kahn:
    input:
        summary="results/summary.csv",
        code=PLOTS_CODE,
    output:
        png=report("figures/kahn.png", caption="../report/kahn.rst", category="Kahn"),
        pdf="figures/kahn.pdf",
    params:
        figure="kahn",
    log:
        "results/logs/figures/kahn.log",
    script:
        "../scripts/plot_summary.py"


rule plot_static_comparison:
    input:
        bench=bench_inputs,
        code=PLOTS_CODE,
    output:
        png=report("figures/static_comparison.png", caption="../report/static_comparison.rst", category="Benchmarks"),
        pdf="figures/static_comparison.pdf",
    params:
        figure="static_comparison",
    log:
        "results/logs/figures/static_comparison.log",
    script:
        "../scripts/plot_bench.py"


rule plot_partition_ablation:
    input:
        bench=bench_inputs,
        code=PLOTS_CODE,
    output:
        png=report("figures/partition_ablation.png", caption="../report/partition_ablation.rst", category="Benchmarks"),
        pdf="figures/partition_ablation.pdf",
    params:
        figure="partition_ablation",
    log:
        "results/logs/figures/partition_ablation.log",
    script:
        "../scripts/plot_bench.py"


rule plot_temporal_per_batch:
    input:
        summary="results/summary.csv",
        code=PLOTS_CODE,
    output:
        png=report(
            "figures/temporal_per_batch_{dataset}.png",
            caption="../report/temporal_per_batch.rst",
            category="Temporal graphs",
            subcategory="{dataset}",
        ),
        pdf="figures/temporal_per_batch_{dataset}.pdf",
    params:
        figure="temporal_per_batch",
    log:
        "results/logs/figures/temporal_per_batch_{dataset}.log",
    script:
        "../scripts/plot_summary.py"
