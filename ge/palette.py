"""One fill colour per unit for every picture `ge` draws, so a kernel looks the same in the kernel
and stream pictures (Graphviz, `ge/visualize.py`) and on the profiler's timeline and roofline
(matplotlib, `ge/profiler_plots.py`); both read these hex colours."""

UNIT_COLOURS = {"cube": "#f4a582", "vector": "#92c5de", "aicpu": "#c2a5cf", "trans_data": "#d9d9d9"}
"""Fill colour of a kernel (or launch) by the unit it runs on; format conversions (trans_data, on
the vector cores) apart, as they only move data."""
UNKNOWN_COLOUR = "#f0f0f0"
"""For anything no unit names."""
