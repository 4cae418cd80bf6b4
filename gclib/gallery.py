"""What every figure shows and which paper claim it tests: the one source of the README gallery and the index.

``python -m gclib gallery`` prints the gallery as Markdown; a test keeps the README's copy, the figures in
``figures/`` and this table in step.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Figure:
    stem: str
    notebook: str
    shows: str
    claim: str


NOTEBOOKS = {
    "01_gradient_coding": ("Tandon, Lei, Dimakis, Karampatziakis: Gradient Coding (ICML 2017)",
                           "FRC and CRC derived and verified exactly; conditioning; completion time against s"),
    "02_reed_solomon": ("Halbawi, Azizan, Salehi, Hassibi: Reed-Solomon gradient codes (ISIT 2018)",
                        "a small RS code derived and verified; conditioning against n for each choice of points"),
    "03_communication_efficient": ("Ye and Abbe (ICML 2018); Kadhe, Koyluoglu, Ramchandran (2020)",
                                   "the (d, s, m) trade-off, iteration time against m, numerical stability"),
    "04_gc_mmc": ("Ozfatura, Gunduz, Ulukus: GC with clustering and multi-message communication (2019)",
                  "Example 1 verified exactly; Fig. 1 under eq. 5 and per-task times; the text's claims checked"),
    "05_mmc_design": ("Ozfatura, Gunduz, Ulukus (future work of the paper)",
                      "search of orders, order vectors and clusters; Pareto fronts of time against load"),
    "06_lazy_aggregation": ("Zhang and Simeone: LAGC and G-LAG (TNNLS 2021); Chen et al.: LAG (NeurIPS 2018)",
                            "Figs. 2 and 3: time, uploads and computation to a target gap; the claims checked"),
    "07_mpi_runs": ("Tandon et al. (ICML 2017): real runs over MPI",
                    "loss and AUC against wall-clock time with injected stragglers; measured against simulated"),
    "08_scale": ("Tandon et al. (ICML 2017); Ozfatura, Gunduz, Ulukus (2019): the schemes at datacenter scale",
                 "completion time, coding gain and messages of GC, FRC, LCC, UC-MMC and GC-MMC for K up to 10,000"),
    "09_advise": ("gclib advise: from a measured cluster to the code to run",
                  "fits recover known models; profile, fit, advise and real runs on this machine"),
    "10_real_traces": ("gclib advise on real traces: Lin et al.'s public traces (OSDI 2025)",
                       "convert, variance split, fit, advise and a back-test on held-out iterations"),
}

FIGURES = [
    Figure("01_crc_conditioning", "01_gradient_coding",
           "worst and median condition number of CRC's decoding system, and the float64 decoding error, "
           "against n (s = n/4), over seeds",
           "our check: the worst-case conditioning of Tandon's random construction (which decodes every pattern "
           "with probability 1) grows with n"),
    Figure("01_completion_time", "01_gradient_coding",
           "expected completion time against s for uncoded, ignore-stragglers, FRC and CRC (n = 40), "
           "shifted exponential and Pareto, Monte Carlo with 95% CIs beside the closed forms",
           "coded schemes beat waiting for every worker (Tandon et al.), judged per model and s; FRC against CRC; "
           "ignore-stragglers fastest but approximate; the Monte Carlo matches the closed forms"),
    Figure("02_rs_conditioning", "02_reed_solomon",
           "worst-case error amplification and float64/float32 decoding error of RS codes against n, for "
           "Chebyshev, equispaced and roots-of-unity points and three straggler fractions",
           "real-valued RS / polynomial gradient codes become numerically unusable as n grows; complex points "
           "help at twice the communication"),
    Figure("03_tradeoff", "03_communication_efficient",
           "computation load d against the communication reduction m for s = 1, 2, 4, read off the codes (MDS: "
           "Ye-Abbe and Kadhe et al.'s Gaussian code; Kadhe et al.'s repetition code), and message size against d",
           "Ye and Abbe's optimal trade-off d >= s + m is met by both constructions"),
    Figure("03_iteration_time_vs_m", "03_communication_efficient",
           "simulated iteration time against m under a latency + size/bandwidth communication model",
           "communication-efficient codes reduce iteration time (Ye-Abbe: -23% vs Tandon; Kadhe et al.: "
           "-16% vs prior codes, on EC2): direction only"),
    Figure("03_stability", "03_communication_efficient",
           "worst decoding error in float64 and float32 of Ye-Abbe's polynomial code and Kadhe et al.'s "
           "Gaussian MDS code against n",
           "Kadhe et al.: the Gaussian MDS code is numerically stable where Ye-Abbe's is not"),
    Figure("04_fig1", "04_gc_mmc",
           "Fig. 1 at K = 40, r = 10, mu = 10, alpha = 0.01: completion time and both communication-load "
           "accountings for GC, LCC, UC-MMC, GC-MMC-1 and GC-MMC-2, under eq. 5 and per-task times",
           "GC-MMC performs as well as LCC with about one message per worker; UC-MMC is faster at a higher "
           "load"),
    Figure("04_order_sweep", "04_gc_mmc",
           "the correlated design of every order m in 4 clusters: completion time against messages",
           "more messages (lower orders) can beat LCC"),
    Figure("05_pareto", "05_mmc_design",
           "completion time against communication load for every scheme and design searched, with the Pareto "
           "fronts, under the shifted-exponential and Pareto models",
           "GC-MMC gives a more flexible time/load trade-off than GC and UC-MMC"),
    Figure("05_budget", "05_mmc_design",
           "the fastest design within each budget of messages per iteration",
           "the optimization of orders the paper leaves to future work"),
    Figure("06_lag_check", "06_lazy_aggregation",
           "loss gap against iterations and uploads for GD, LAG-WK and LAG-PS on Chen et al.'s heterogeneous "
           "9-worker regression, under Chen et al.'s warm-up (solid) and ours (dashed)",
           "LAG reaches the target with far fewer uploads than GD"),
    Figure("06_fig2_pareto", "06_lazy_aggregation",
           "time, uploads and computation to the target gap for GD, GC, LAG, LAGC and G-LAG under Pareto "
           "compute times, over seeds",
           "Fig. 2: G-LAG is best in (simulated) time and communication at low computation"),
    Figure("06_fig3_exp", "06_lazy_aggregation",
           "the same comparison under exponential compute times",
           "Fig. 3: the same ordering under the light tail"),
    Figure("06_curves_pareto", "06_lazy_aggregation",
           "loss gap against simulated time, uploads and computations (Pareto, one seed)",
           "Fig. 2: G-LAG reaches the target first in time and with the fewest uploads"),
    Figure("06_curves_exp", "06_lazy_aggregation",
           "loss gap against simulated time, uploads and computations (exponential, one seed)",
           "Fig. 3: the same ordering under the light tail"),
    Figure("06_shapes", "06_lazy_aggregation",
           "time to the target against the Pareto shape for every scheme",
           "coding helps most under the heavy tail"),
    Figure("07_loss_vs_time", "07_mpi_runs",
           "training loss against measured wall-clock time of real MPI runs (Tandon's synthetic data and "
           "breast cancer; shifted-exponential and Pareto stragglers)",
           "coded schemes beat uncoded in running time (Tandon et al.)"),
    Figure("07_auc_vs_time", "07_mpi_runs",
           "test AUC against measured wall-clock time of the same runs",
           "ignore-stragglers generalizes worse than the exact codes (Tandon et al.)"),
    Figure("07_measured_vs_simulated", "07_mpi_runs",
           "measured iteration time of every MPI iteration against, and relative to, the simulator's prediction for the same "
           "sampled delays",
           "the runtime adds little to the injected delays (our own check: measured within 10% of predicted)"),
    Figure("08_completion_time", "08_scale",
           "mean completion time against K (log-log) of uncoded, GC, FRC, LCC, UC-MMC and GC-MMC, the load a "
           "fixed fraction of K or fixed with GC-MMC in fixed clusters, shifted exponential and Pareto, with the "
           "closed forms of the order statistics",
           "our check: the Monte Carlo agrees with the order-statistic closed forms at every K"),
    Figure("08_gain", "08_scale",
           "coding gain over uncoded (paired ratio of mean times) against K, same panels",
           "which gains of the papers (Tandon et al.; GC-MMC's Fig. 1) grow with K and which vanish"),
    Figure("08_messages", "08_scale",
           "messages received until completion per worker against K, same panels",
           "GC-MMC sends fewer messages than UC-MMC at every K"),
    Figure("09_fit_recovery", "09_advise",
           "the 95% interval of every fitted parameter divided by its true value, for traces drawn by three "
           "models (shifted exponential per worker, exponential per task, Pareto per worker)",
           "our check: the fits' intervals cover the parameters that made the trace"),
    Figure("09_trace_fit", "09_advise",
           "a trace measured on this machine with gclib profile (injected shifted-exponential delays) against "
           "the fitted per-worker models, with their goodness of fit",
           "our check: the goodness of fit picks the injected family"),
    Figure("09_advice_front", "09_advise",
           "the advice for that trace: expected iteration time of every design against messages and gradients "
           "received per iteration, the front of each fitted model and of the replayed trace",
           "the recommendation, and how much the models agree on it"),
    Figure("09_predicted_vs_real", "09_advise",
           "the advice's predicted mean iteration time against real MPI runs of the advised code and of uncoded, "
           "and every real iteration against the simulator's time for its injected delays",
           "our check: the advised code's real iteration time is within 10% of the prediction"),
    Figure("10_variance_split", "10_real_traces",
           "the variance of each real trace's log paces split into worker, iteration and residual parts, with "
           "bootstrap intervals over iterations and workers",
           "our reading of the paper's root causes: one slow worker (AR), none persistently slow (SE, ST)"),
    Figure("10_predicted_vs_held", "10_real_traces",
           "every design's mean iteration time predicted from the first half of a trace (the ranking model and "
           "the independent replay) against its time on the held-out half, every worker kept",
           "our check: the advised design within 7% held out, regret under 3%"),
    Figure("10_model_errors", "10_real_traces",
           "per model, the error of its prediction of uncoded (fitted and held-out half) and of its own "
           "recommendation (held out), beside the slowest worker's drift",
           "our check: where each model breaks; the ranking model within 5% in sample"),
]


def claims_summary(figures_dir="figures") -> list[dict]:
    """Per notebook of :data:`NOTEBOOKS` (the index excepted): how many of its claims hold, do not hold and are
    inconclusive, read from ``figures_dir/NN_claims.csv`` (``None`` counts when that file does not exist yet)."""
    from . import claims

    out = []
    for nb in NOTEBOOKS:
        p = claims.path(nb, figures_dir)
        counts = claims.counts(claims.read(p)) if p.exists() else None
        out.append({"notebook": nb, "file": p.name, "counts": counts})
    return out


def claims_markdown(figures_dir: str = "figures", data_dir=None, notebooks_dir: str = "notebooks") -> str:
    """A Markdown table of :func:`claims_summary`: one row per notebook, links to its claims table.

    Args:
        figures_dir: the folder the links point into (relative to where the Markdown is shown).
        data_dir: where to read the CSVs (default ``figures_dir``).
        notebooks_dir: the folder of the notebooks, relative to where the Markdown is shown (``.`` in a
            notebook).
    """
    from . import claims

    lines = ["| notebook | " + " | ".join(claims.VERDICTS) + " | claims table |", "|---|---|---|---|---|"]
    for row in claims_summary(figures_dir if data_dir is None else data_dir):
        c = row["counts"]
        cells = [str(c[v]) for v in claims.VERDICTS] if c else ["not run yet"] * len(claims.VERDICTS)
        link = f"[{row['file']}]({figures_dir}/{row['file']})" if c else "run `make reproduce`"
        lines.append(f"| [`{row['notebook']}`]({notebooks_dir}/{row['notebook']}.ipynb) | " + " | ".join(cells)
                     + f" | {link} |")
    return "\n".join(lines) + "\n"


def markdown(figures_dir: str = "figures", data_dir=None, notebooks_dir: str = "notebooks") -> str:
    """The README gallery: the claims of every notebook counted by verdict, then a table per notebook, one row
    per figure.

    Args:
        figures_dir: the folder the links point into. data_dir: where to read the claims CSVs (default
            ``figures_dir``). notebooks_dir: the folder the notebook links point into (``.`` in the index
            notebook, which sits beside the others).
    """
    lines = ["Claims checked per notebook, counted from each notebook's claims table (the verdict rules are in "
             "`gclib.claims`):", "", claims_markdown(figures_dir, data_dir, notebooks_dir).rstrip(), ""]
    by_nb: dict = {}
    for f in FIGURES:
        by_nb.setdefault(f.notebook, []).append(f)
    for nb, figs in by_nb.items():
        paper, _ = NOTEBOOKS[nb]
        lines.append(f"**[`{nb}`]({notebooks_dir}/{nb}.ipynb)**: {paper}")
        lines.append("")
        lines.append("| figure | what it shows | claim it tests |")
        lines.append("|---|---|---|")
        for f in figs:
            lines.append(f'| <a href="{figures_dir}/{f.stem}.png"><img src="{figures_dir}/{f.stem}.png" '
                         f'width="320" alt="{f.stem}"></a><br>`{f.stem}` ([data]({figures_dir}/{f.stem}.csv)) '
                         f"| {f.shows} | {f.claim} |")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def missing(figures_dir) -> tuple[list, list]:
    """(PNG files without a gallery entry, gallery entries without a PNG file)."""
    pngs = {p.stem for p in Path(figures_dir).glob("*.png")}
    known = {f.stem for f in FIGURES}
    return sorted(pngs - known), sorted(known - pngs)


def status(figures_dir) -> str:
    """Markdown: how many gallery figures ``figures_dir`` holds, which are not made yet and which PNG files have
    no gallery entry (the index notebook's last line)."""
    unlisted, not_made = missing(figures_dir)
    lines = [f"{len(FIGURES)} figures in the gallery; {len(FIGURES) - len(not_made)} of them found in "
             f"`{figures_dir}`."]
    if not_made:
        lines.append(f"Not produced yet (run `make reproduce`): {', '.join(not_made)}.")
    if unlisted:
        lines.append(f"Figures without a gallery entry: {', '.join(unlisted)}.")
    return "\n\n".join(lines) + "\n"
