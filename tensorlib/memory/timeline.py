"""The memory timeline picture: bytes alive over time, stacked by role, peak marked.

SVG is written by tensorlib itself (no dependency); PNG goes through matplotlib when it is
installed. Used by ``Profile.save_timeline``.

>>> svg = render_svg([(0.0, [0, 0, 0, 0, 100]), (0.001, [0, 0, 0, 0, 300])],
...                  ["unknown", "parameter", "buffer", "input", "activation"])
>>> svg.startswith("<svg") and "activation" in svg
True
"""
import math
from xml.sax.saxutils import escape

__all__ = ["save", "render_svg", "ROLE_COLORS"]

ROLE_COLORS = {
    "unknown": "#9e9e9e", "parameter": "#1f77b4", "buffer": "#17becf", "input": "#8c564b",
    "activation": "#ff7f0e", "saved-for-backward": "#d62728", "gradient": "#2ca02c",
    "optimizer-state": "#9467bd", "temporary": "#e6c300",
}

W, H = 960, 440                 # picture size
L, R, T, B = 78, 190, 46, 52    # margins (the legend sits in the right one)


def _fmt_bytes(n):
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= scale:
            v = n / scale
            return f"{v:.3g} {unit}"
    return f"{int(n)} B"


def _nice_ticks(hi, n=5, binary=False):
    """Round tick values from 0 to at least ``hi`` (steps of 1, 2, 2.5 or 5 times a power of
    ten; of KiB/MiB/GiB for a byte axis)."""
    if hi <= 0:
        return [0]
    unit = 1
    if binary:
        while unit < (1 << 30) and hi >= unit * 1024:
            unit *= 1024
    raw = hi / unit / n
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if m * mag >= raw:
            break
    step = m * mag * unit
    return [i * step for i in range(int(hi / step + 0.999) + 1)]


def _downsample(series, columns):
    """At most ~2 points per pixel column, keeping in each column the sample with the most
    bytes (so the peak survives) and the column's last sample (so steps stay steps)."""
    if len(series) <= 2 * columns:
        return series
    t0, t1 = series[0][0], series[-1][0]
    span = (t1 - t0) or 1.0
    out, col, best, last = [], None, None, None
    for s in series:
        c = int((s[0] - t0) / span * (columns - 1))
        if c != col:
            if best is not None:
                out.append(best)
                if last is not best:
                    out.append(last)
            col, best = c, s
        elif sum(s[1]) > sum(best[1]):
            best = s
        last = s
    out.append(best)
    if last is not best:
        out.append(last)
    out.sort(key=lambda s: s[0])
    return out


def render_svg(series, role_names, peak=None, steps=(), title="tensorlib memory timeline"):
    """The SVG text for ``series`` = [(seconds, [bytes per role])]."""
    pw, ph = W - L - R, H - T - B
    if not series:
        series = [(0.0, [0] * len(role_names))]
    used = [i for i in range(len(role_names)) if any(s[1][i] for s in series)]
    pts = _downsample(series, pw)
    t0 = min(0.0, pts[0][0])              # time since the profile began
    t1 = max(pts[-1][0], t0 + 1e-9)
    top = max(max(sum(s[1]) for s in pts), peak[1] if peak else 0, 1)
    yt = _nice_ticks(top, binary=True)
    ymax = max(yt[-1], top)

    def X(t):
        return L + (t - t0) / (t1 - t0) * pw

    def Y(b):
        return T + ph - b / ymax * ph

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
           f'viewBox="0 0 {W} {H}" font-family="Helvetica, Arial, sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{L}" y="{T - 18}" font-size="16" font-weight="bold">{escape(title)}</text>']
    # grid and y axis
    for v in yt:
        y = Y(v)
        out.append(f'<line x1="{L}" y1="{y:.1f}" x2="{L + pw}" y2="{y:.1f}" stroke="#e0e0e0"/>')
        out.append(f'<text x="{L - 6}" y="{y + 4:.1f}" text-anchor="end">{_fmt_bytes(v)}</text>')
    # stacked areas, bottom role first, drawn as steps (memory changes at events)
    base = [0] * len(pts)
    for i in used:
        upper = [b + s[1][i] for b, s in zip(base, pts)]
        poly = []
        for j, s in enumerate(pts):
            x = X(s[0])
            if j:
                poly.append((x, Y(upper[j - 1])))
            poly.append((x, Y(upper[j])))
        poly.append((X(t1), Y(upper[-1])))
        poly.append((X(t1), Y(base[-1])))
        for j in range(len(pts) - 1, -1, -1):
            x = X(pts[j][0])
            if j + 1 < len(pts):
                poly.append((X(pts[j + 1][0]), Y(base[j])))
            poly.append((x, Y(base[j])))
        d = " ".join(f"{x:.1f},{y:.1f}" for x, y in poly)
        out.append(f'<polygon points="{d}" fill="{ROLE_COLORS.get(role_names[i], "#777")}" '
                   f'fill-opacity="0.85" stroke="none"><title>{escape(role_names[i])}</title></polygon>')
        base = upper
    # x axis (milliseconds)
    for v in _nice_ticks((t1 - t0) * 1e3):
        x = X(t0 + v / 1e3)
        if x > L + pw + 0.5:
            break
        out.append(f'<line x1="{x:.1f}" y1="{T + ph}" x2="{x:.1f}" y2="{T + ph + 4}" stroke="#333"/>')
        out.append(f'<text x="{x:.1f}" y="{T + ph + 17}" text-anchor="middle">{v:g}</text>')
    out.append(f'<text x="{L + pw / 2:.0f}" y="{H - 12}" text-anchor="middle">time (ms)</text>')
    out.append(f'<text x="16" y="{T + ph / 2:.0f}" text-anchor="middle" '
               f'transform="rotate(-90 16 {T + ph / 2:.0f})">bytes alive</text>')
    out.append(f'<rect x="{L}" y="{T}" width="{pw}" height="{ph}" fill="none" stroke="#333"/>')
    # step marks
    for k, t in enumerate(steps):
        x = X(t)
        out.append(f'<line x1="{x:.1f}" y1="{T}" x2="{x:.1f}" y2="{T + ph}" stroke="#555" '
                   f'stroke-width="0.6" stroke-dasharray="2,3"><title>step {k}</title></line>')
    # the peak
    if peak is not None:
        px, py = X(peak[0]), Y(peak[1])
        out.append(f'<line x1="{px:.1f}" y1="{T}" x2="{px:.1f}" y2="{T + ph}" stroke="black" '
                   f'stroke-dasharray="5,3"/>')
        out.append(f'<circle cx="{px:.1f}" cy="{py:.1f}" r="4" fill="black"/>')
        anchor = "start" if px < L + pw * 0.7 else "end"
        dx = 7 if anchor == "start" else -7
        out.append(f'<text x="{px + dx:.1f}" y="{max(py - 6, T + 12):.1f}" text-anchor="{anchor}" '
                   f'font-weight="bold">peak {_fmt_bytes(peak[1])}</text>')
    # legend (top role first, as stacked)
    ly = T + 8
    for i in reversed(used):
        name = role_names[i]
        out.append(f'<rect x="{L + pw + 16}" y="{ly}" width="12" height="12" '
                   f'fill="{ROLE_COLORS.get(name, "#777")}"/>')
        out.append(f'<text x="{L + pw + 34}" y="{ly + 10}">{escape(name)}</text>')
        ly += 20
    out.append("</svg>")
    return "\n".join(out)


def _save_png(path, series, role_names, peak, steps, title):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        raise RuntimeError("save_timeline: a .png needs matplotlib (pip install matplotlib); "
                           "an .svg path needs nothing") from None
    ts = [s[0] * 1e3 for s in series] or [0.0]
    used = [i for i in range(len(role_names)) if any(s[1][i] for s in series)]
    fig, ax = plt.subplots(figsize=(W / 100, H / 100), dpi=100)
    ax.stackplot(ts, *[[s[1][i] for s in series] for i in used], step="post",
                 labels=[role_names[i] for i in used],
                 colors=[ROLE_COLORS.get(role_names[i], "#777") for i in used])
    if peak is not None:
        ax.axvline(peak[0] * 1e3, color="black", linestyle="--", linewidth=1)
        ax.annotate(f"peak {_fmt_bytes(peak[1])}", (peak[0] * 1e3, peak[1]), fontweight="bold")
    for t in steps:
        ax.axvline(t * 1e3, color="#555", linestyle=":", linewidth=0.6)
    ax.set_xlabel("time (ms)")
    ax.set_ylabel("bytes alive")
    ax.set_title(title)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)


def save(path, series, role_names, peak=None, steps=(), title="tensorlib memory timeline"):
    """Write the timeline to ``path``: PNG when it ends with .png, SVG otherwise."""
    path = str(path)
    if path.lower().endswith(".png"):
        _save_png(path, series, role_names, peak, steps, title)
    else:
        with open(path, "w") as f:
            f.write(render_svg(series, role_names, peak, steps, title))
    return path
