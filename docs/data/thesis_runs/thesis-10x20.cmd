attnlab preset thesis --seeds 10 --sources 20 --analysis-csv docs/data/thesis_runs/thesis-10x20.analysis.csv --svg docs/data/thesis_runs/thesis-10x20.svg --heatmap docs/data/thesis_runs/thesis-10x20
