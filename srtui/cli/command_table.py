# ruff: noqa: E501
"""Every command of `srtui`: its module and one-line summary, for `srtui --help` (``srtui.cli.lazy``).

Generated from the commands' docstrings by ``python -m srtui.cli.write_command_table``: edit those,
then run it.
"""

COMMANDS: dict[str, tuple[str, str]] = {
    "run": (
        "srtui.cli.run_cmd",
        "Run a suite's methods x tasks x seeds as isolated, hard-limited jobs (resumable).",
    ),
    "status": (
        "srtui.cli.run_cmd",
        "Counts per status and running jobs; safe to call from another shell during a run.",
    ),
    "results": (
        "srtui.cli.run_cmd",
        "One row per job, with its status, resources and accuracy (--summary: per suite and method).",
    ),
    "score": (
        "srtui.cli.score_cmd",
        "Score the runs of the workspace (or of a CSV file) with a named rule, optionally beside SRBench's published results (--published).",
    ),
    "expr": (
        "srtui.cli.score_cmd",
        "Report an expression's metrics as each SRBench release computes them (vs --truth if given).",
    ),
    "export": (
        "srtui.cli.score_cmd",
        "Export all runs with their metrics, and each suite's leaderboard under its scoring rule.",
    ),
    "rescore": (
        "srtui.cli.score_cmd",
        "(Re)compute the metrics of finished jobs from their stored predictions and models, here or on a cluster (the same backend options as `srtui run`).",
    ),
    "plot": (
        "srtui.cli.plot_cmd",
        "Draw a publication figure (PDF, SVG or PNG) from the scoring rules' own tables.",
    ),
    "report": (
        "srtui.cli.plot_cmd",
        "Write one self-contained HTML report of the workspace: leaderboards, figures, models, failures, reviews and run metadata; it needs no network and runs no outside script. --published: each suite beside SRBench's published results, with the comparison's warnings.",
    ),
    "tui": (
        "srtui.cli.tui_cmd",
        "Open the terminal app: monitor, results explorer, expressions, plots, leaderboards.",
    ),
    "tasks": (
        "srtui.cli.tasks_cmd",
        "The task catalogue: list, show, export and add tasks.",
    ),
    "methods": (
        "srtui.cli.methods_cmd",
        "List, check and install symbolic regression methods.",
    ),
    "env": (
        "srtui.cli.env_cmd",
        "List and create named Python environments for method folders.",
    ),
    "review": (
        "srtui.cli.review_cmd",
        "Blinded expert trust ratings of models (SRBench 2022 real-world track): create, open, status, close, unblind, report.",
    ),
}
