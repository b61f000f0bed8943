"""Every Nsight Compute metric ``roofgen import ncu`` reads: one row each.

A row names the metric, the case-file field it feeds, the unit Nsight Compute gives
it in, the releases and GPUs that have it, and how it is used. The importer takes
its metric names from here (:func:`names`), the Guide's "How to measure" page
prints this table (:func:`markdown_table`), and a test checks that every metric the
importer reads is a row.

Counters are kept as the exact integers Nsight Compute printed; only quotients
(a time from cycles over a clock, a clock, a mean) are rounded when written.
"""

from __future__ import annotations

from dataclasses import dataclass

ALL = "all releases"  # every Nsight Compute release (2019.1 on), every GPU it profiles


@dataclass(frozen=True)
class MetricRow:
    metric: str  # the Nsight Compute metric name
    field: str  # where it goes in a case file (measurement.<field>)
    unit: str  # the unit Nsight Compute reports it in
    versions: str  # Nsight Compute releases and GPUs that have it
    use: str  # how roofgen uses it, for people


def _sass(op: str, use: str, versions: str = ALL) -> MetricRow:
    return MetricRow(
        f"smsp__sass_thread_inst_executed_op_{op}_pred_on.sum", "flops", "inst", versions, use
    )


_BLACKWELL = "CC 10.0 and newer"
_TENSOR_OPS = "CC 8.0 and newer"

METRICS: tuple[MetricRow, ...] = (
    # time and clocks
    MetricRow(
        "gpu__time_duration.sum", "time", "nsecond", ALL, "duration of one launch (preferred)"
    ),
    MetricRow("gpu__time_duration.avg", "time", "nsecond", ALL, "duration (summary: its mean)"),
    MetricRow("gpu__time_active.sum", "time", "nsecond", ALL, "GPU active time, if no duration"),
    MetricRow("gpu__time_active.avg", "time", "nsecond", ALL, "GPU active time (summary: mean)"),
    MetricRow("smsp__cycles_elapsed.avg", "time", "cycle", ALL, "time = cycles / clock"),
    MetricRow("sm__cycles_elapsed.avg", "time", "cycle", ALL, "time = cycles / clock"),
    MetricRow("smsp__cycles_elapsed.max", "time", "cycle", ALL, "time = cycles / clock"),
    MetricRow("sm__cycles_elapsed.max", "time", "cycle", ALL, "time = cycles / clock"),
    MetricRow("gpc__cycles_elapsed.avg", "time", "cycle", ALL, "time = cycles / clock"),
    MetricRow("gpc__cycles_elapsed.max", "time", "cycle", ALL, "time = cycles / clock"),
    MetricRow("gpc__cycles_elapsed.avg.per_second", "clocks.sm", "cycle/second", ALL, "GPC clock"),
    MetricRow("smsp__cycles_elapsed.avg.per_second", "clocks.sm", "cycle/second", ALL, "SM clock"),
    MetricRow("sm__cycles_elapsed.avg.per_second", "clocks.sm", "cycle/second", ALL, "SM clock"),
    MetricRow(
        "dram__cycles_elapsed.avg.per_second", "clocks.memory", "cycle/second", ALL, "memory clock"
    ),  # fmt: skip
    MetricRow(
        '"Duration" (GPU Speed Of Light Throughput)',
        "time",
        "nsecond, us, ms",
        ALL,
        "the default sections' gpu__time_duration.sum",
    ),  # fmt: skip
    MetricRow(
        '"SM Frequency" (GPU Speed Of Light Throughput)',
        "clocks.sm",
        "cycle/second, Mhz, Ghz",
        ALL,
        "the default sections' smsp__cycles_elapsed.avg.per_second",
    ),  # fmt: skip
    MetricRow(
        '"DRAM Frequency" (GPU Speed Of Light Throughput)',
        "clocks.memory",
        "Ghz",
        ALL,
        "the default sections' dram__cycles_elapsed.avg.per_second",
    ),  # fmt: skip
    MetricRow(
        '"Achieved Occupancy" (Occupancy)',
        "occupancy",
        "%",
        ALL,
        "the default sections' sm__warps_active.avg.pct_of_peak_sustained_active",
    ),  # fmt: skip
    # FLOPs
    _sass("dadd", "FP64: 1 FLOP each"),
    _sass("dmul", "FP64: 1 FLOP each"),
    _sass("dfma", "FP64: 2 FLOPs each"),
    _sass("fadd", "FP32: 1 FLOP each"),
    _sass("fmul", "FP32: 1 FLOP each"),
    _sass("ffma", "FP32: 2 FLOPs each"),
    _sass("fadd2", "FP32: 2 FLOPs each", _BLACKWELL),
    _sass("fmul2", "FP32: 2 FLOPs each", _BLACKWELL),
    _sass("ffma2", "FP32: 4 FLOPs each", _BLACKWELL),
    _sass("hadd", "FP16: 2 FLOPs each (a packed pair)"),
    _sass("hmul", "FP16: 2 FLOPs each (a packed pair)"),
    _sass("hfma", "FP16: 4 FLOPs each (a packed pair)"),
    MetricRow(
        "sm__ops_path_tensor_src_{precision}[_dst_{precision}].sum",
        "flops.<tensor>",
        "",
        _TENSOR_OPS,
        "tensor FLOPs (or OPs) per source precision",
    ),  # fmt: skip
    MetricRow(
        "sm__inst_executed_pipe_tensor.sum",
        "flops.<tensor>.fp16",
        "inst",
        "CC 7.0",
        "V100: 512 FLOPs per tensor instruction (as NERSC's roofline scripts); elsewhere "
        "only decides a known zero",
    ),  # fmt: skip
    MetricRow(
        "smsp__inst_executed_pipe_tensor_op_{hmma,imma,dmma}.sum",
        "flops.<tensor>",
        "inst",
        "CC 7.0 to 9.0",
        "decide a known zero of tensor work",
    ),  # fmt: skip
    # bytes and transactions
    MetricRow("dram__bytes_read.sum", "bytes.<device>.read", "byte", ALL, "device memory"),
    MetricRow("dram__bytes_write.sum", "bytes.<device>.write", "byte", ALL, "device memory"),
    MetricRow("dram__bytes.sum", "bytes.<device>", "byte", ALL, "device memory, in all"),
    MetricRow("dram__bytes_op_read.sum", "bytes.<device>.read", "byte", ALL, "device memory"),
    MetricRow("dram__bytes_op_write.sum", "bytes.<device>.write", "byte", ALL, "device memory"),
    MetricRow("dram__sectors.sum", "bytes.<device>", "sector", ALL, "32 B each, in all"),
    MetricRow("dram__sectors_read.sum", "bytes.<device>.read", "sector", ALL, "32 B each"),
    MetricRow("dram__sectors_write.sum", "bytes.<device>.write", "sector", ALL, "32 B each"),
    MetricRow("lts__t_bytes.sum", "bytes.<llc>", "byte", ALL, "L2 traffic, in all"),
    MetricRow("lts__t_sectors.sum", "bytes.<llc>", "sector", ALL, "L2 sectors, in all (32 B)"),
    MetricRow(
        "lts__t_sectors_op_read.sum",
        "bytes.<llc>",
        "sector",
        ALL,
        "L2 = 32 B x (read + write + atom + red)",
    ),  # fmt: skip
    MetricRow(
        "lts__t_sectors_op_write.sum",
        "bytes.<llc>",
        "sector",
        ALL,
        "L2 = 32 B x (read + write + atom + red)",
    ),  # fmt: skip
    MetricRow(
        "lts__t_sectors_op_atom.sum",
        "bytes.<llc>",
        "sector",
        ALL,
        "L2 atomics (once each, as Nsight Compute's lts__t_sectors counts them)",
    ),  # fmt: skip
    MetricRow(
        "lts__t_sectors_op_red.sum", "bytes.<llc>", "sector", ALL, "L2 reductions (once each)"
    ),  # fmt: skip
    MetricRow("l1tex__t_bytes.sum", "bytes.<l1>", "byte", ALL, "L1 traffic, in all"),
    MetricRow("l1tex__t_sectors.sum", "bytes.<l1>", "sector", ALL, "L1 sectors, in all"),
    MetricRow(
        "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
        "global_transactions",
        "sector",
        ALL,
        "global load sectors (instruction roofline)",
    ),  # fmt: skip
    MetricRow(
        "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
        "global_transactions",
        "sector",
        ALL,
        "global store sectors (instruction roofline)",
    ),  # fmt: skip
    MetricRow(
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
        "global_ldst_instructions",
        "request",
        ALL,
        "global load requests: one per warp instruction",
    ),  # fmt: skip
    MetricRow(
        "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
        "global_ldst_instructions",
        "request",
        ALL,
        "global store requests: one per warp instruction",
    ),  # fmt: skip
    MetricRow(
        "smsp__inst_executed_op_global_ld.sum",
        "global_ldst_instructions",
        "inst",
        ALL,
        "global load warp instructions, where requests are not collected",
    ),  # fmt: skip
    MetricRow(
        "smsp__inst_executed_op_global_st.sum",
        "global_ldst_instructions",
        "inst",
        ALL,
        "global store warp instructions, where requests are not collected",
    ),  # fmt: skip
    MetricRow(
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
        "shared_wavefronts",
        "",
        ALL,
        "shared-memory load wavefronts",
    ),  # fmt: skip
    MetricRow(
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
        "shared_wavefronts",
        "",
        ALL,
        "shared-memory store wavefronts",
    ),  # fmt: skip
    MetricRow(
        "smsp__inst_executed_op_shared_ld.sum",
        "shared_ldst_instructions",
        "inst",
        ALL,
        "shared loads; bank conflicts = wavefronts - instructions (the bank_conflicts "
        "counters over-report)",
    ),  # fmt: skip
    MetricRow(
        "smsp__inst_executed_op_shared_st.sum",
        "shared_ldst_instructions",
        "inst",
        ALL,
        "shared stores",
    ),  # fmt: skip
    # instructions and occupancy
    MetricRow("smsp__inst_executed.sum", "instructions", "inst", ALL, "warp instructions"),
    MetricRow("sm__inst_executed.sum", "instructions", "inst", ALL, "warp instructions"),
    MetricRow(
        "sm__warps_active.avg.pct_of_peak_sustained_active",
        "occupancy",
        "%",
        ALL,
        "achieved occupancy",
    ),  # fmt: skip
)


# Section values Nsight Compute's default sections print by label (in a per-kernel summary
# or a --page details CSV), and the raw metric each label shows.
SECTION_LABELS: dict[str, str] = {
    "Duration": "gpu__time_duration.sum",
    "SM Frequency": "smsp__cycles_elapsed.avg.per_second",
    "DRAM Frequency": "dram__cycles_elapsed.avg.per_second",
    "Achieved Occupancy": "sm__warps_active.avg.pct_of_peak_sustained_active",
}


def names(field: str) -> tuple[str, ...]:
    """The metrics of the table that feed ``field`` (exactly), in the table's order."""
    return tuple(row.metric for row in METRICS if row.field == field)


def markdown_table() -> str:
    """The table as Markdown, for the Guide."""
    lines = [
        "| metric | field | unit | Nsight Compute | use |",
        "|---|---|---|---|---|",
    ]
    for row in METRICS:
        unit = f"`{row.unit}`" if row.unit else "(count)"
        lines.append(f"| `{row.metric}` | `{row.field}` | {unit} | {row.versions} | {row.use} |")
    return "\n".join(lines)
