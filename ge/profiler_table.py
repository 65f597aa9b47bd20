"""The profile as text: `ProfileReport.table`, what `ge profile` prints."""

from __future__ import annotations

from .profile_data import ProfileData

TABLE_HEADER = (
    "kernel",
    "unit",
    "type",
    "stream",
    "start us",
    "launch us",
    "core us",
    "measured us",
    "MFLOP",
    "KiB",
    "bound",
    "busy",
    "of peak",
    "peak",
)
TABLE_NOTE = (
    "core us: time its cores were held, launch overhead apart; busy: share of it its bound unit works\n"
    "of peak: achieved FLOP/s (peak HBM: bytes/s) over the peak of the cores it holds at its type"
)


def table(report: ProfileData, top: int = 10) -> str:
    """`report` as text: its figures, per-stream and per-unit busy shares, then the `top` kernels by
    core time (launch overhead apart), each with its bound, `busy` and `of_peak`."""
    lines = [
        f"{report.soc}, {'sunk' if report.sunk else 'launched from the host'}: "
        f"{len(report.kernels)} launches, modelled {report.latency_us:.2f} us, "
        f"measured on the emulator {report.measured_total_us:.0f} us",
        f"npu utilization {report.npu_utilization:.1%}, compute (cube) {report.compute_utilization:.1%}, "
        f"HBM bandwidth {report.memory_bandwidth_utilization:.1%}",
        "streams busy: " + ", ".join(f"{s}: {u:.1%}" for s, u in report.stream_utilization.items()),
        "units busy: " + ", ".join(f"{u}: {v:.1%}" for u, v in report.unit_utilization.items()),
        "",
    ]
    header = TABLE_HEADER
    rows = [
        (
            k.kernel,
            k.unit,
            k.dtype,
            str(k.stream),
            f"{k.start_us:.2f}",
            f"{k.launch_us:.2f}",
            f"{k.core_us:.2f}",
            f"{k.measured_us:.0f}",
            f"{k.flops / 1e6:.3f}",
            f"{k.hbm_bytes / 1024:.1f}",
            k.bound,
            f"{k.busy:.0%}",
            f"{k.of_peak:.1%}",
            k.peak,
        )
        for k in sorted(report.kernels, key=lambda k: (-k.core_us, k.index))[:top]
    ]
    left = {0, 1, 2, 10, 13}
    widths = [max(len(row[i]) for row in (header, *rows)) for i in range(len(header))]
    for row in (header, *rows):
        cells = [
            c.ljust(w) if i in left else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True))
        ]
        lines.append("  ".join(cells).rstrip())
    if len(report.kernels) > top:
        lines.append(f"... {len(report.kernels) - top} more kernels")
    lines.append(TABLE_NOTE)
    return "\n".join(lines)
