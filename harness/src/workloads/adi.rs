//! `adi`: 3-D ADI as in the DVMH paper's Listing 2 (docs/models.md §4).
//!
//! Per iteration three sweeps: along i, along j, along k, each `a = (a(−1) + a(+1)) / 2`
//! sequentially along its axis with one executor per line; the k sweep also reduces
//! EPS = max |old − new|. The array is n³ with k fastest, so in the `plain` layout the i and
//! j sweeps are coalesced (neighbouring executors differ in k) and the k sweep is strided:
//! neighbouring executors sit n elements apart. The `reordered` layout swaps the j and k
//! axes before the k sweep and back after it (two transpose phases), so every sweep is
//! coalesced — the paper's "dynamic array reordering".

use super::grid3d::{initial, line_patterns, program, swap_jk, sweep};
use super::session::{compare_with_history, Session};
use super::{check_cube, finish, Access, Layout, RunResult, Workload, WorkloadError};
use crate::backend::{Arg, Buffer, Device, Launch};

/// Agreement with the host, as a fraction of the array's largest value.
pub const TOLERANCE: f64 = 1e-5;

/// Listing 2 on the host: the reference. Returns the array and EPS per iteration.
pub fn reference(n: usize, iterations: usize) -> (Vec<f32>, Vec<f32>) {
    let mut a = initial(n);
    let mut history = Vec::new();
    for _ in 0..iterations {
        sweep(&mut a, n, n * n, 1, n);
        sweep(&mut a, n, n, 1, n * n);
        history.push(sweep(&mut a, n, 1, n, n * n));
    }
    (a, history)
}

/// 3-D ADI, plain or reordered.
#[derive(Debug, Clone, Copy)]
pub struct Adi(pub Layout);

impl Workload for Adi {
    /// The three sweeps, and in the `reordered` layout the transposes too: their executors
    /// read along k and write with a stride of n (one cache line per executor per step).
    fn access_patterns(&self) -> Vec<(&str, Access)> {
        line_patterns(["sweep i", "sweep j", "sweep k"], self.0)
    }

    fn name(&self) -> &str {
        "adi"
    }

    fn bytes_needed(&self, size: usize) -> u64 {
        let copies = if self.0 == Layout::Reordered { 2 } else { 1 };
        super::grid_bytes(copies, size, 3, 4)
    }

    fn parallelism(&self, size: usize) -> Option<u64> {
        let inner = size.saturating_sub(2) as u64;
        Some(inner * inner)
    }

    fn run(
        &self,
        device: &dyn Device,
        size: usize,
        iterations: usize,
        verify: bool,
    ) -> Result<RunResult, WorkloadError> {
        check_cube(self, device, size, 3)?;
        let n = size;
        let mut s = Session::new(device, &program())?;
        let a = s.upload_f32(&initial(n))?;
        let eps = s.scratch(4)?;
        let swapped = match self.0 {
            Layout::Reordered => Some(s.scratch(n * n * n * 4)?),
            Layout::Plain => None,
        };
        let mut history = Vec::with_capacity(iterations);
        for _ in 0..iterations {
            s.launch("zero_u32", &Launch::single(), &[Arg::Buf(&eps)])?;
            let (nn, n1) = ((n * n) as u32, n as u32);
            sweep_launch(&mut s, "sweep i", &a, n, [nn, 1, n1], false, &eps)?;
            sweep_launch(&mut s, "sweep j", &a, n, [n1, 1, nn], false, &eps)?;
            match &swapped {
                None => sweep_launch(&mut s, "sweep k", &a, n, [1, n1, nn], true, &eps)?,
                Some(b) => {
                    swap_jk(&mut s, &a, b, n)?;
                    sweep_launch(&mut s, "sweep k", b, n, [n1, 1, nn], true, &eps)?;
                    swap_jk(&mut s, b, &a, n)?;
                }
            }
            history.push(s.download_f32(&eps, 1)?[0]);
        }
        let got = s.download_f32(&a, n * n * n)?;
        let verification = verify
            .then(|| compare_with_history(got, &history, reference(n, iterations), TOLERANCE));
        finish(self.name(), size, iterations, &s.phases, verification)
    }
}

/// Launch one sweep; `strides` = [along the line, between fast executors, between slow ones].
fn sweep_launch(
    s: &mut Session<'_>,
    phase: &str,
    a: &Buffer,
    n: usize,
    strides: [u32; 3],
    with_eps: bool,
    eps: &Buffer,
) -> Result<(), WorkloadError> {
    let launch = s.grid2(n - 2, n - 2);
    let bytes = 8 * ((n - 2) * (n - 2) * n) as u64;
    // Per updated point: the neighbours' add, the halving, the change's subtract and the
    // running maximum.
    let flops = 4 * ((n - 2) * (n - 2) * (n - 2)) as u64;
    s.launch_declared(
        phase,
        "adi_sweep",
        &launch,
        &[
            Arg::Buf(a),
            Arg::U32(n as u32),
            Arg::U32(strides[0]),
            Arg::U32(strides[1]),
            Arg::U32(strides[2]),
            Arg::U32(u32::from(with_eps)),
            Arg::Buf(eps),
        ],
        Some(bytes),
        Some(flops),
    )
}
