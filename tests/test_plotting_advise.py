"""The network figure of notebook 09 on a hand-made case: the designs, their three estimates, the measured line."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from gclib.network import NetworkProfile  # noqa: E402
from gclib.studies.advise import plots as plot  # noqa: E402


def test_network_figure_shows_both_designs_and_the_fitted_line():
    real = pd.DataFrame([{"role": role, "label": label, "free": 0.02, "free_lo": 0.019, "free_hi": 0.021,
                          "charged": c, "charged_lo": c - 0.001, "charged_hi": c + 0.001, "mean_time": m,
                          "lo": m - 0.002, "hi": m + 0.002}
                         for role, label, c, m in (("free", "uc-mmc r=3", 0.04, 0.041), ("charged", "uncoded", 0.03,
                                                                                              0.031))])
    # floods of 4 and 8 messages: the master's time per message is (last - first) / (messages - 1)
    flood = [[8, 4, 0.0, 3e-5], [8000, 4, 0.0, 3.3e-5], [800000, 8, 0.0, 7e-4]]
    ping = [[8, 0, 4e-5], [8000, 1, 5e-5]]
    prof = NetworkProfile(1e-5, 1e-5, 8e9, 800000, 4, [], ping, flood)
    fig = plot.network(real, prof, 0.1)
    a, b = fig.axes[:2]
    names = [t.get_text() for t in a.get_yticklabels()]
    assert "uc-mmc r=3" in names[0] and "without" in names[0] and "uncoded" in names[1] and "network" in names[1]
    assert len(a.patches) == 2  # the band around each charged prediction
    gaps = np.sort(b.collections[0].get_offsets()[:, 1])
    assert np.allclose(gaps, 1e6 * np.sort([1e-5, 1.1e-5, 1e-4]))
    x, y = b.lines[0].get_data()
    assert np.allclose(y, 1e6 * (1e-5 + x / 8e9))
    plt.close(fig)
