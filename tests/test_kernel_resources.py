"""benchmarks/kernel_resources.py's readers of ptxas's log and of PTX, on text in the form
NVRTC writes them (the compilation itself needs cuda-python's NVRTC, not installed here)."""

import runpy
from pathlib import Path

SCRIPT = runpy.run_path(str(Path(__file__).resolve().parents[1] / "benchmarks" / "kernel_resources.py"))

PTXAS_LOG = """\
ptxas info    : 3303 bytes gmem
ptxas info    : Compiling entry function '_Z10rank_fusedILb1ELi3EEvN5dynpr9GraphArgsE' for 'sm_90'
ptxas info    : Function properties for _Z10rank_fusedILb1ELi3EEvN5dynpr9GraphArgsE
ptxas         .     8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 48 registers, used 1 barriers, 8 bytes cumulative stack size, 144 bytes smem
ptxas info    : Compile time = 676.091 ms
ptxas info    : Compiling entry function 'hold' for 'sm_90'
ptxas info    : Function properties for hold
ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 8 registers, used 0 barriers
"""

PTX = """\
.visible .entry hold(
\t.param .u64 hold_param_0
)
{
\t.reg .b64 \t%rd<4>;

\tld.param.u64 \t%rd1, [hold_param_0];
$L__BB0_1:
\t// begin inline asm
\tmov.u64 %rd2, %globaltimer;
\t// end inline asm
\t@%p1 bra \t$L__BB0_1;
\tret;

}
.func helper()
{
\tret;
}
"""


def test_ptxas_log_gives_each_entry_its_registers_frame_spills_and_shared_memory():
    usage = SCRIPT["parse_ptxas"](PTXAS_LOG)
    assert usage == {
        "_Z10rank_fusedILb1ELi3EEvN5dynpr9GraphArgsE": {"regs": 48, "stack": 8, "spill_st": 4, "spill_ld": 12,
                                                       "smem": 144},
        "hold": {"regs": 8, "stack": 0, "spill_st": 0, "spill_ld": 0, "smem": 0},
    }


def test_ptx_instructions_count_an_entrys_instructions_only():
    # ld.param, the inline asm's mov, the predicated bra and ret; not the .reg directive, the
    # label, the comments, nor the out-of-line .func after the entry
    assert SCRIPT["ptx_instructions"](PTX) == {"hold": 4}
