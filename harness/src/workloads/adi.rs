//! `adi`: 3-D ADI as in the DVMH paper's Listing 2 (PAPERS.md §4).
//!
//! Per iteration three sweeps: along i, along j, along k, each `a = (a(−1) + a(+1)) / 2`
//! sequentially along its axis with one executor per line; the k sweep also reduces
//! EPS = max |old − new|. The array is n³ with k fastest, so in the `plain` layout the i and
//! j sweeps are coalesced (neighbouring executors differ in k) and the k sweep is strided:
//! neighbouring executors sit n elements apart. The `reordered` layout swaps the j and k
//! axes before the k sweep and back after it (two transpose phases), so every sweep is
//! coalesced — the paper's "dynamic array reordering".

use super::session::{compare_with_history, Session};
use super::{check_cube, finish, Layout, RunResult, Workload, WorkloadError};
use crate::backend::{Arg, Buffer, Device, HostArgs, HostKernel, Launch, ProgramSource};

/// Agreement with the host, as a fraction of the array's largest value.
pub const TOLERANCE: f64 = 1e-5;

/// The 3-D grid program (ADI, LU-SSOR, line solves) and its host twins.
pub fn program() -> ProgramSource {
    ProgramSource::embedded(
        "grid3d.kern",
        include_str!("../../../kernels/workloads/grid3d.kern"),
        TWINS,
    )
}

const TWINS: &[(&str, HostKernel)] = &[
    ("zero_u32", host_zero),
    ("adi_sweep", host_sweep),
    ("swap_jk", host_swap),
    ("ssor_plane", super::lu_ssor::host_plane),
    ("line_solve", super::line_solve::host_line_solve),
];

fn host_zero(a: &HostArgs<'_>, _: &Launch) -> Result<(), String> {
    a.slice_mut::<u32>(0)?[0] = 0;
    Ok(())
}

/// One sweep over all interior lines; returns the largest change.
pub fn sweep(a: &mut [f32], n: usize, line: usize, fast: usize, slow: usize) -> f32 {
    let mut worst = 0.0f32;
    for e_slow in 1..n - 1 {
        for e_fast in 1..n - 1 {
            let base = e_slow * slow + e_fast * fast;
            let mut line_worst = 0.0f32;
            for t in 1..n - 1 {
                let p = base + t * line;
                let old = a[p];
                let v = (a[p - line] + a[p + line]) * 0.5;
                a[p] = v;
                line_worst = line_worst.max((old - v).abs());
            }
            worst = worst.max(line_worst);
        }
    }
    worst
}

fn host_sweep(a: &HostArgs<'_>, _: &Launch) -> Result<(), String> {
    let grid = a.slice_mut::<f32>(0)?;
    let (n, line, fast, slow) = (
        a.u32(1)? as usize,
        a.u32(2)? as usize,
        a.u32(3)? as usize,
        a.u32(4)? as usize,
    );
    let with_eps = a.u32(5)? != 0;
    let eps = &mut a.slice_mut::<u32>(6)?[0];
    let worst = sweep(grid, n, line, fast, slow);
    if with_eps {
        *eps = (*eps).max(worst.to_bits());
    }
    Ok(())
}

pub(super) fn host_swap(a: &HostArgs<'_>, _: &Launch) -> Result<(), String> {
    let (src, dst, n) = (
        a.slice::<f32>(0)?,
        a.slice_mut::<f32>(1)?,
        a.u32(2)? as usize,
    );
    for i in 0..n {
        for j in 0..n {
            for k in 0..n {
                dst[(i * n + k) * n + j] = src[(i * n + j) * n + k];
            }
        }
    }
    Ok(())
}

/// The initial array: deterministic values in [0, 1).
pub fn initial(n: usize) -> Vec<f32> {
    (0..n * n * n)
        .map(|k| ((k as u64 * 2_654_435_761 % 1000) as f32) * 1e-3)
        .collect()
}

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
    fn name(&self) -> &str {
        "adi"
    }

    fn bytes_needed(&self, size: usize) -> u64 {
        let copies = if self.0 == Layout::Reordered { 2 } else { 1 };
        copies * 4 * (size as u64).pow(3) + 4
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
    s.launch_moving(
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
    )
}

/// Transpose the j and k axes of `from` into `to` (the reordering phase).
pub(super) fn swap_jk(
    s: &mut Session<'_>,
    from: &Buffer,
    to: &Buffer,
    n: usize,
) -> Result<(), WorkloadError> {
    let cube = s.cube(n);
    s.launch_moving(
        "swap j,k",
        "swap_jk",
        &cube,
        &[Arg::Buf(from), Arg::Buf(to), Arg::U32(n as u32)],
        Some(8 * (n * n * n) as u64),
    )
}
