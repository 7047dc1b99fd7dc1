"""Where each machine generation counts the events the workload model makes up.

This is the inverse view of the formula sets: for every generation, which
extended counters receive the L1 misses sourced from each level, which
counters hold TLB activity, and how the finite-cache cycles are recorded.
Counter numbers follow metrics.md §3 (s390-tools counter tables).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class GenerationLayout:
    name: str
    machine_type: str
    model: str
    cfvn: int
    csvn: int
    cpu_speed: int                      # cycles per microsecond
    sourcing: dict[str, tuple[int, ...]]  # metric -> (D-side counter, I-side counter, ...)
    tlb_miss_cycles: tuple[int, int]    # (data, instruction)
    tlb_writes: tuple[int, int]
    pte_writes: int
    finite: str                         # 'penalty-0.84' | 'penalty-rni' | 'raw' | 'e143'


GENERATIONS: dict[str, GenerationLayout] = {
    "z10": GenerationLayout("z10", "2097", "E26", 1, 1, 4400,
                            {"L15P": (129, 128), "L2LP": (131, 130), "L2RP": (133, 132), "MEMP": (134, 135)},
                            (146, 145), (139, 138), 140, "penalty-0.84"),
    "z196": GenerationLayout("z196", "2817", "M32", 1, 2, 5200,
                             {"L2P": (128, 129), "L3P": (150, 153), "L4LP": (135, 136), "L4RP": (134, 143),
                              "MEMP": (141, 142)},
                             (130, 131), (144, 145), 146, "penalty-rni"),
    "zEC12": GenerationLayout("zEC12", "2827", "H43", 1, 3, 5500,
                              {"L2P": (132, 131), "L3P": (144, 153), "L4LP": (145, 154), "L4RP": (146, 155),
                               "MEMP": (135, 137)},
                              (128, 129), (133, 140), 141, "raw"),
    "z13": GenerationLayout("z13", "2964", "NE1", 1, 4, 5000,
                            {"L2P": (133, 136), "L3P": (144, 162), "L4LP": (146, 164), "L4RP": (149, 167),
                             "MEMP": (158, 176)},
                            (130, 135), (129, 134), 137, "e143"),
    "z14": GenerationLayout("z14", "3906", "M03", 3, 5, 5200,
                            {"L2P": (133, 136), "L3P": (144, 162), "L4LP": (147, 165), "L4RP": (153, 171),
                             "MEMP": (145, 163)},
                            (130, 135), (129, 134), 137, "e143"),
    "z15": GenerationLayout("z15", "8561", "T01", 3, 6, 5200,
                            {"L2P": (133, 136), "L3P": (144, 162), "L4LP": (147, 165), "L4RP": (153, 171),
                             "MEMP": (145, 163)},
                            (130, 135), (129, 134), 137, "e143"),
    "z16": GenerationLayout("z16", "3931", "A01", 3, 7, 5200,
                            {"L2P": (145, 169), "L3P": (149, 173), "L4LP": (153, 177), "L4RP": (155, 179),
                             "MEMP": (156, 180)},
                            (130, 135), (129, 134), 137, "e143"),
    "z17": GenerationLayout("z17", "9175", "ME1", 3, 8, 5500,
                            {"L2P": (145, 169), "L3P": (149, 173), "L4LP": (153, 177), "L4RP": (155, 179),
                             "MEMP": (156, 157)},
                            (130, 135), (129, 134), 137, "e143"),
}

# z10 names its levels differently; the generic mix (own L2, chip, local drawer/book, remote, memory)
# maps onto each generation's sourcing metrics.
GENERIC_TO_Z10 = {"L2P": "L15P", "L3P": "L2LP", "L4LP": "L2LP", "L4RP": "L2RP", "MEMP": "MEMP"}
