"""The Won study's runs and constants.

One grid over ``echo.toml`` (a copy of ``scenarios/won/echo.toml``):
protocol (udp, via) times message size. Each run sends ten measured
messages after two warm-up ones; the client's echo report holds every
message's send and receive cycles by layer, grouped as the study groups
them (see ``docs/models/via.md``).
"""

from __future__ import annotations

from pathlib import Path

from nicsim.studies.framework import Grid

HERE = Path(__file__).parent

PROTOCOLS = ["udp", "via"]
SIZES = [4, 64, 256, 1024, 1472, 2048, 4096, 8192, 16384, 32768]
"""Message sizes (bytes): a few bytes to well above the MTU; 1472 B is the
largest UDP payload in one 1500-byte frame."""

MTU = 1500

ECHO = Grid(
    "echo",
    HERE / "echo.toml",
    {"workload.echo.protocol": PROTOCOLS, "workload.echo.size": [f"{s}B" for s in SIZES]},
    "Messages to an echo node, UDP/IP and VIA, per size (Figures 3-7)",
)

UDP_LAYERS = ["socket", "udp", "ip", "dev", "dev_drv", "intr", "dma"]
VIA_LAYERS = ["vi_library", "transport", "dev_drv", "intr", "dma"]
LABELS = {
    "socket": "Socket",
    "udp": "UDP",
    "ip": "IP",
    "dev": "Dev",
    "dev_drv": "Dev Drv",
    "intr": "Intr",
    "dma": "DMA",
    "vi_library": "VI Library",
    "transport": "Transport",
}
COLORS = {
    "socket": "#4c72b0",
    "udp": "#55a868",
    "ip": "#c44e52",
    "dev": "#8172b2",
    "dev_drv": "#937860",
    "intr": "#da8bc3",
    "dma": "#8c8c8c",
    "vi_library": "#64b5cd",
    "transport": "#ccb974",
}


def layers(proto: str) -> list[str]:
    """The study's layers of ``proto``, in its order."""
    return UDP_LAYERS if proto == "udp" else VIA_LAYERS

CLOCKS = ["100MHz", "400MHz"]
"""Other clocks than the profile's estimated 200 MHz, to show what the clock
moves (only DMA: every CPU cost is in cycles)."""
CLOCK_SIZES = [4, 256, 1472, 4096, 32768]

CLOCK = Grid(
    "clock",
    HERE / "echo.toml",
    {
        "hosts[0].cpu.clock": CLOCKS,
        "workload.echo.protocol": PROTOCOLS,
        "workload.echo.size": [f"{s}B" for s in CLOCK_SIZES],
    },
    "The echo runs at 100 and 400 MHz: what the clock estimate moves",
)
