"""What every figure shows and which claims it tests: the one source of the README gallery and the index.

A figure names the rows of its notebook's claims table that it tests (:attr:`Figure.claims`, ``fnmatch`` patterns
of claim ids); the gallery renders those rows (ids, kinds, short claims and verdicts) from the claims CSV, so the
text beside a figure never states a result that its rows deny. ``python -m gclib gallery`` prints the gallery as
Markdown; a test keeps the README's copy, the figures in ``figures/`` and this table in step.
"""
from __future__ import annotations

from dataclasses import dataclass
from fnmatch import fnmatchcase
from pathlib import Path

from gclib import claims


@dataclass(frozen=True)
class Figure:
    """One figure: its file stem, its notebook, what it shows, and the claim ids it tests (``fnmatch`` patterns
    over the ids of the notebook's claims table; empty for a figure that only shows)."""

    stem: str
    notebook: str
    shows: str
    claims: tuple = ()


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
    "11_partial_stragglers": ("Ramamoorthy, Meng, Girimaji: Leveraging partial stragglers within gradient coding "
                              "(NeurIPS 2024), reconstructed",
                              "Q_max of the chunk orderings; exact-recovery time and uploads against GC, UC-MMC, "
                              "GC-MMC; approximate-recovery error at deadlines"),
    "12_sequential": ("Krishnan, Ebrahimi, Khisti: Sequential Gradient Coding For Straggler Mitigation (ICLR 2023)",
                      "GC, SR-SGC and M-SGC chosen on a probe and replayed on held-out rounds of model, trace and "
                      "MPI delay matrices"),
    "13_approximate": ("Raviv et al. (ICML 2018); Glasgow and Wootters (JSAIT 2021); Bitar et al. (JSAIT 2020)",
                       "approximate codes: decoding error against the straggler fraction, and training with it"),
    "14_head_to_head": ("Every family of 2017-2024 side by side: one-shot, multi-message, partial-straggler, "
                        "sequential and approximate codes",
                        "mean iteration time against computation and communication on the same models and real "
                        "traces"),
    "15_your_model": ("Your model, coded: a network of one's own trained over MPI with the codes gclib advises for "
                      "a real trace",
                      "a PyTorch network on scikit-learn's digits, 8 workers, Lin et al.'s recorded delays, a killed "
                      "worker; time to a test accuracy, measured against simulated"),
}

FIGURES = [
    Figure("01_crc_conditioning", "01_gradient_coding",
           "worst and median condition number of CRC's decoding system, and the float64 decoding error, "
           "against n (s = n/4), over seeds", ("T8",)),
    Figure("01_completion_time", "01_gradient_coding",
           "expected completion time against s for uncoded, ignore-stragglers, FRC and CRC (n = 40), "
           "shifted exponential and Pareto, Monte Carlo with 95% CIs beside the closed forms",
           ("T3*", "T4*", "T5*", "T6*", "T7*")),
    Figure("02_rs_conditioning", "02_reed_solomon",
           "worst-case error amplification and float64/float32 decoding error of RS codes against n, for "
           "Chebyshev, equispaced and roots-of-unity points and three straggler fractions",
           ("R3", "R4", "R5*", "R6", "R7", "R9", "R10*", "R12")),
    Figure("03_tradeoff", "03_communication_efficient",
           "computation load d against the communication reduction m for s = 1, 2, 4, read off the codes (MDS: "
           "Ye-Abbe and Kadhe et al.'s Gaussian code; Kadhe et al.'s repetition code), and message size against d",
           ("E3", "E4")),
    Figure("03_iteration_time_vs_m", "03_communication_efficient",
           "simulated iteration time against m under a latency + size/bandwidth communication model",
           ("T1", "T2", "T3", "T4", "T5", "T6*", "T7")),
    Figure("03_stability", "03_communication_efficient",
           "worst decoding error in float64 and float32 of Ye-Abbe's polynomial code and Kadhe et al.'s "
           "Gaussian MDS code against n", ("S1*", "S2", "S3")),
    Figure("04_fig1", "04_gc_mmc",
           "Fig. 1 at K = 40, r = 10, mu = 10, alpha = 0.01: completion time and both communication-load "
           "accountings for GC, LCC, UC-MMC, GC-MMC-1 and GC-MMC-2, under eq. 5 and per-task times",
           ("F1*", "F2*", "F4*", "F5*", "F6*", "F7*", "F8*")),
    Figure("04_order_sweep", "04_gc_mmc",
           "the correlated design of every order m in 4 clusters: completion time against messages", ("F3*", "F9*")),
    Figure("05_pareto", "05_mmc_design",
           "completion time against communication load for every scheme and design searched, with the Pareto "
           "fronts, under the shifted-exponential and Pareto models", ("F*", "P*", "C*")),
    Figure("05_budget", "05_mmc_design",
           "the fastest design within each budget of messages per iteration", ("B*",)),
    Figure("06_lag_check", "06_lazy_aggregation",
           "loss gap against iterations and uploads for GD, LAG-WK and LAG-PS on Chen et al.'s heterogeneous "
           "9-worker regression, under Chen et al.'s warm-up (solid) and ours (dashed)", ("L-*", "W-*")),
    Figure("06_fig2_pareto", "06_lazy_aggregation",
           "our reconstruction of Fig. 2: time, uploads and computation to the target gap for GD, GC, grouping, and "
           "LAG, LAGC and G-LAG with each trigger, under Pareto compute times of mean 1, over seeds",
           ("T-*:p*", "U-*:p*", "C-*:p*", "LU-*:p*", "SU-*:p*", "SC-*:p*")),
    Figure("06_fig3_exp", "06_lazy_aggregation",
           "our reconstruction of Fig. 3: the same comparison under exponential compute times of mean 1",
           ("T-*:exp", "U-*:exp", "C-*:exp", "LU-*:exp", "SU-*:exp", "SC-*:exp")),
    Figure("06_curves_pareto", "06_lazy_aggregation",
           "loss gap against simulated time, uploads and computations (Pareto, one seed; server-side trigger "
           "dashed)", ("LT-*:p*", "G-*:p*")),
    Figure("06_curves_exp", "06_lazy_aggregation",
           "loss gap against simulated time, uploads and computations (exponential, one seed)",
           ("LT-*:exp", "G-*:exp")),
    Figure("06_shapes", "06_lazy_aggregation",
           "time to the target against the Pareto shape (mean 1) for every scheme", ("H-*",)),
    Figure("06_family", "06_lazy_aggregation",
           "iterations to the target, relative to GD's, of every scheme on a family of generic problems "
           "(linear and logistic regression, two designs, condition numbers 1 to 100), with Chen et al.'s "
           "server-side constant beside ours", ("K", "K-chen", "F*")),
    Figure("07_loss_vs_time", "07_mpi_runs",
           "training loss against measured wall-clock time of real MPI runs (Tandon's synthetic data and "
           "breast cancer; shifted-exponential and Pareto stragglers)", ("M1*", "M2")),
    Figure("07_auc_vs_time", "07_mpi_runs",
           "test AUC against measured wall-clock time of the same runs", ("M4*",)),
    Figure("07_measured_vs_simulated", "07_mpi_runs",
           "measured iteration time of every MPI iteration against, and relative to, the simulator's prediction "
           "for the same sampled delays", ("M5*",)),
    Figure("08_completion_time", "08_scale",
           "mean completion time against K (log-log) of uncoded, GC, FRC, LCC, UC-MMC and GC-MMC, the load a "
           "fixed fraction of K or fixed with GC-MMC in fixed clusters, shifted exponential and Pareto, with the "
           "closed forms of the order statistics", ("C", "M1*", "M3*")),
    Figure("08_gain", "08_scale",
           "coding gain over uncoded (paired ratio of mean times) against K, same panels", ("G1*", "G2*")),
    Figure("08_messages", "08_scale",
           "messages received until completion per worker against K, same panels", ("M2*",)),
    Figure("09_fit_recovery", "09_advise",
           "the 95% interval of every fitted parameter divided by its true value, for traces drawn by three "
           "models (shifted exponential per worker, exponential per task, Pareto per worker)", ("F1*", "F2*")),
    Figure("09_trace_fit", "09_advise",
           "a trace measured on this machine with gclib profile (injected shifted-exponential delays) against "
           "the fitted per-worker models, with their goodness of fit", ("M1",)),
    Figure("09_advice_front", "09_advise",
           "the advice for that trace: expected iteration time of every design against messages and gradients "
           "received per iteration, the front of each fitted model and of the replayed trace", ()),
    Figure("09_predicted_vs_real", "09_advise",
           "the advice's predicted mean iteration time against real MPI runs of the advised code and of uncoded, "
           "and every real iteration against the simulator's time for its injected delays", ("A1", "A2", "A3")),
    Figure("09_network", "09_advise",
           "the designs advised with messages free and with the measured cost of a message charged (gclib "
           "profile's round trips and floods through a link of limited rate into the master's host, across "
           "network namespaces): both predictions, the link's time for all they send, and their real MPI runs",
           ("N*",)),
    Figure("10_variance_split", "10_real_traces",
           "the variance of each real trace's log paces split into worker, iteration and residual parts, with "
           "bootstrap intervals over iterations and workers", ("R1*",)),
    Figure("10_predicted_vs_held", "10_real_traces",
           "every design's mean iteration time predicted from the first half of a trace (the ranking model and "
           "the independent replay) against its time on the held-out half, every worker kept",
           ("B3*", "B4*")),
    Figure("10_model_errors", "10_real_traces",
           "per model, the error of its prediction of uncoded (fitted and held-out half) and of its own "
           "recommendation (held out), beside the slowest worker's drift", ("B5*",)),
    Figure("11_q_max", "11_partial_stragglers",
           "Q_max (worst-case chunk computations until every chunk is done once) above its lower bound against n, "
           "for the perfect-matching, natural and random orderings, on cyclic and random regular assignments",
           ("R0", "R1", "C2")),
    Figure("11_exact_time", "11_partial_stragglers",
           "mean exact-recovery time and vectors received of RMG (optimal and random orderings), GC, UC-MMC and "
           "GC-MMC on the same worker times, shifted exponential and Pareto, with 95% intervals",
           ("P1*", "P3", "R2", "R3", "R4")),
    Figure("11_approx_mse", "11_partial_stragglers",
           "mean error of approximate recovery at deadlines (fractions of GC's mean exact time), log scale: RMG's "
           "covered chunks against the least-squares decodes of GC and GC-MMC", ("P2",)),
    Figure("12_gains", "12_sequential",
           "per delay source (compute-time models under gclib's proportional and the authors' shift load model, "
           "with and without worker and round effects; shipped traces; a real MPI run), the held-out run time of "
           "SR-SGC and M-SGC below GC's, paired over seeds with 95% CIs, beside the paper's 16% and the authors' "
           "simulated 5.1%", ("P1", "P2", "E1*", "R1", "R2", "R3")),
    Figure("12_mu", "12_sequential",
           "the gain of SR-SGC and M-SGC over GC against the deadline factor mu, one panel per compute-time model "
           "under the authors' load model, with 95% CIs", ("C3",)),
    Figure("13_benchmark", "13_approximate",
           "our run of the authors' expander-code benchmark (n = 50, d = 3): mean error of the fixed and the optimal "
           "decoder and the spectral bound against s, with 95% bars over the graphs, beside the published means",
           ("A3", "A4")),
    Figure("13_errors", "13_approximate",
           "decoding error ||a B_R - 1||_2 and its normalized square against the straggler fraction for the expander "
           "code (optimal and fixed decoders), stochastic GC, ignore-stragglers and the exact CRC of the same load, "
           "95% bands over random instances", ("A1", "A2", "A5", "A6")),
    Figure("13_training", "13_approximate",
           "loss gap against simulated time for gradient descent with each code's decoded gradient (one seed, "
           "Pareto compute times): the approximate codes, and the expander code against exact CRC and uncoded",
           ("T*",)),
    Figure("14_time_vs_load", "14_head_to_head",
           "per model (compute-time models and real traces), the mean iteration time of every line of work's "
           "fastest design at each computation load, with 95% intervals", ("P*", "S*")),
    Figure("14_time_vs_communication", "14_head_to_head",
           "per model, the mean iteration time against the gradient-length vectors received per iteration, the "
           "designs of each line of work that no other of its designs beats on both", ("Q*",)),
    Figure("15_accuracy_vs_time", "15_your_model",
           "test accuracy of the digits network against wall-clock time over MPI for uncoded and the codes gclib "
           "advise recommends for trace SE (with and without communication charged), under its replayed delays; "
           "below, each seed's time to the target accuracy with the mean and its 95% interval", ("C3*",)),
    Figure("15_measured_vs_predicted", "15_your_model",
           "every iteration's time measured over MPI against the simulator's for the same replayed delays, runs "
           "with a killed worker marked apart", ("C1", "C2*", "C4*")),
]


def matching(figure: Figure, table) -> "list":
    """The rows of ``table`` (a notebook's claims table) that ``figure`` tests, in the table's order."""
    return [r for _, r in table.iterrows() if any(fnmatchcase(r["id"], p) for p in figure.claims)]


def _counts_text(rows) -> str:
    """``"3 hold, 1 does not hold"``: the verdicts of ``rows`` counted (zeros left out)."""
    words = {claims.HOLDS: ("holds", "hold"), claims.FAILS: ("does not hold", "do not hold"),
             claims.INCONCLUSIVE: ("inconclusive", "inconclusive"),
             claims.NOT_TESTABLE: ("not testable here", "not testable here")}
    c = {v: sum(r["verdict"] == v for r in rows) for v in claims.VERDICTS}
    return ", ".join(f"{n} {words[v][n != 1]}" for v, n in c.items() if n)


def claims_text(figure: Figure, table=None) -> str:
    """What ``figure`` tests, rendered from its rows of ``table``: per kind, the short claims (at most two, then a
    count of the others) and the verdicts counted; ``"no claim: it shows ..."`` for a figure without rows."""
    if not figure.claims:
        return "no claim of its own"
    if table is None:
        return "not run yet: run `make reproduce`"
    rows = matching(figure, table)
    if not rows:
        return f"no row of the claims table matches {', '.join(figure.claims)}"
    parts = []
    for kind in claims.KINDS:
        sub = [r for r in rows if r["kind"] == kind]
        if not sub:
            continue
        texts = list(dict.fromkeys(r["claim"] for r in sub))
        shown = "; ".join(texts[:2]) + (f"; and {len(texts) - 2} more" if len(texts) > 2 else "")
        ids = [r["id"] for r in sub]
        span = ids[0] if len(ids) == 1 else f"{ids[0]} to {ids[-1]}"
        parts.append(f"*{kind}* ({span}): {shown}: **{_counts_text(sub)}**")
    return "<br>".join(parts)


def claims_summary(figures_dir="figures") -> list[dict]:
    """Per notebook of :data:`NOTEBOOKS` (the index excepted): how many of its claims of each kind hold, do not hold
    and are inconclusive (:func:`gclib.claims.counts_by_kind`), read from ``figures_dir/NN_claims.csv`` (``None``
    counts when that file does not exist yet)."""
    out = []
    for nb in NOTEBOOKS:
        p = claims.path(nb, figures_dir)
        counts = claims.counts_by_kind(claims.read(p)) if p.exists() else None
        out.append({"notebook": nb, "file": p.name, "counts": counts})
    return out


def _verdicts(kind: str) -> tuple:
    """The verdicts a kind's rows can have: :data:`gclib.claims.NOT_TESTABLE` only for ``paper`` rows."""
    return claims.VERDICTS if kind == claims.PAPER else claims.VERDICTS[:3]


def claims_markdown(figures_dir: str = "figures", data_dir=None, notebooks_dir: str = "notebooks") -> str:
    """A Markdown table of :func:`claims_summary`: one row per notebook, one column per kind of claim (the
    paper's results in the paper's setting apart from our extensions, readings and checks), each ``holds / does
    not hold / inconclusive`` (``/ not testable here`` for the paper's), and a link to its claims table.

    Args:
        figures_dir: the folder the links point into (relative to where the Markdown is shown).
        data_dir: where to read the CSVs (default ``figures_dir``).
        notebooks_dir: the folder of the notebooks, relative to where the Markdown is shown (``.`` in a
            notebook).
    """
    lines = ["| notebook | " + " | ".join(claims.KINDS) + " | claims table |",
             "|---|" + "---|" * len(claims.KINDS) + "---|"]
    total = {k: dict.fromkeys(claims.VERDICTS, 0) for k in claims.KINDS}
    for row in claims_summary(figures_dir if data_dir is None else data_dir):
        c = row["counts"]
        if c:
            cells = [" / ".join(str(c[k][v]) for v in _verdicts(k)) for k in claims.KINDS]
            for k in claims.KINDS:
                for v in claims.VERDICTS:
                    total[k][v] += c[k][v]
        else:
            cells = ["not run yet"] * len(claims.KINDS)
        link = f"[{row['file']}]({figures_dir}/{row['file']})" if c else "run `make reproduce`"
        lines.append(f"| [`{row['notebook']}`]({notebooks_dir}/{row['notebook']}.ipynb) | " + " | ".join(cells)
                     + f" | {link} |")
    lines.append("| **all** | " + " | ".join(" / ".join(str(total[k][v]) for v in _verdicts(k))
                                            for k in claims.KINDS) + " | |")
    return "\n".join(lines) + "\n"


#: The columns of the reproduction tables in the gallery (a short form of :data:`gclib.claims.REPRODUCTION`).
GALLERY_REPRODUCTION = ("id", "claim", "paper", "measured", "verdict")


def reproduction_markdown(table) -> str:
    """A notebook's reproduction table in short (:data:`GALLERY_REPRODUCTION`: the result, what the paper says,
    ours, the verdict), or ``""`` when it has no ``paper`` row."""
    rep = claims.reproduction(table)
    if rep.empty:
        return ""
    head = [claims.REPRODUCTION[c] for c in GALLERY_REPRODUCTION]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for _, r in rep.iterrows():
        cells = [str(r[c]).replace("|", "\\|").replace("\n", " ") for c in GALLERY_REPRODUCTION]
        cells[-1] = f"**{cells[-1]}**"
        lines.append("| " + " | ".join(cells) + " |")
    return (f"Reproduction table ({claims.count_text(claims.counts(rep))}):\n\n" + "\n".join(lines) + "\n")


def markdown(figures_dir: str = "figures", data_dir=None, notebooks_dir: str = "notebooks") -> str:
    """The README gallery: the claims of every notebook counted by kind and verdict, then a table per notebook,
    one row per figure, with the claims it tests rendered from the notebook's claims table.

    Args:
        figures_dir: the folder the links point into. data_dir: where to read the claims CSVs (default
            ``figures_dir``). notebooks_dir: the folder the notebook links point into (``.`` in the index
            notebook, which sits beside the others).
    """
    data = Path(figures_dir if data_dir is None else data_dir)
    lines = ["Claims checked per notebook, counted from each notebook's claims table by kind (`paper`: a result of "
             "the paper judged in the paper's own setting, the notebook's reproduction table; `extension`: the "
             "paper's statement carried to a setting it did not test; `reading`: our reading where the paper leaves "
             "something open; `check`: our own test) and verdict (holds / does not hold / inconclusive, and for the "
             "paper's results / not testable here, where the paper's setting cannot be rebuilt; the rules are in "
             "`gclib.claims`):", "",
             claims_markdown(figures_dir, data_dir, notebooks_dir).rstrip(), ""]
    by_nb: dict = {}
    for f in FIGURES:
        by_nb.setdefault(f.notebook, []).append(f)
    for nb, figs in by_nb.items():
        paper, _ = NOTEBOOKS[nb]
        p = claims.path(nb, data)
        table = claims.read(p) if p.exists() else None
        lines.append(f"**[`{nb}`]({notebooks_dir}/{nb}.ipynb)**: {paper}")
        lines.append("")
        rep = reproduction_markdown(table) if table is not None else ""
        if rep:
            lines += [rep.rstrip(), ""]
        lines.append("| figure | what it shows | claims it tests (from the claims table) |")
        lines.append("|---|---|---|")
        for f in figs:
            lines.append(f'| <a href="{figures_dir}/{f.stem}.png"><img src="{figures_dir}/{f.stem}.png" '
                         f'width="320" alt="{f.stem}"></a><br>`{f.stem}` ([data]({figures_dir}/{f.stem}.csv)) '
                         f"| {f.shows} | {claims_text(f, table)} |")
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def reproduction_page(data_dir="figures") -> str:
    """Markdown of every notebook's reproduction table (:func:`reproduction_markdown`), under its notebook's name
    and papers, for ``docs/papers.md``: the papers' results in their own settings, read from the claims CSVs in
    ``data_dir`` (a notebook without a ``paper`` row, or not run yet, is left out)."""
    out = []
    for nb, (papers, _) in NOTEBOOKS.items():
        p = claims.path(nb, data_dir)
        rep = reproduction_markdown(claims.read(p)) if Path(p).exists() else ""
        if rep:
            out += [f"### `{nb}`: {papers}", "", rep.rstrip(), ""]
    return "\n".join(out).rstrip() + "\n"


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
