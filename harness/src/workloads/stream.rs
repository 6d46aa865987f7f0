//! `vadd` (c = a + b, the max-plus paper's example, docs/models.md §1) and `triad`
//! (a = b + s·c, STREAM), in f32.

use super::session::{compare, Session};
use super::{check_fits, finish, RunResult, Workload, WorkloadError};
use crate::backend::{Arg, Device, HostArgs, HostKernel, Launch, ProgramSource};

/// The STREAM program and its host twins.
pub fn program() -> ProgramSource {
    ProgramSource::embedded(
        "workloads/stream.kern",
        include_str!("../../../kernels/workloads/stream.kern"),
        TWINS,
    )
}

const TWINS: &[(&str, HostKernel)] = &[("vadd", host_vadd), ("triad", host_triad)];

// The twins stream chunk by chunk (`backend::host_stream`).
fn host_vadd(a: &HostArgs<'_>, _: &Launch) -> Result<(), String> {
    let n = a.u32(3)? as usize;
    let (x, y) = (a.first::<f32>(0, n)?, a.first::<f32>(1, n)?);
    crate::backend::host_stream::add_into(a.first_mut::<f32>(2, n)?, x, y);
    Ok(())
}

fn host_triad(a: &HostArgs<'_>, _: &Launch) -> Result<(), String> {
    let (s, n) = (a.f32(3)?, a.u32(4)? as usize);
    let (y, z) = (a.first::<f32>(1, n)?, a.first::<f32>(2, n)?);
    crate::backend::host_stream::triad_into(a.first_mut::<f32>(0, n)?, y, z, s);
    Ok(())
}

/// Which STREAM kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamKind {
    /// c = a + b.
    Vadd,
    /// a = b + s·c.
    Triad,
}

/// A STREAM-style workload over `size` elements.
#[derive(Debug, Clone, Copy)]
pub struct Stream(pub StreamKind);

const SCALAR: f32 = 3.0;

fn input(size: usize, salt: u32) -> Vec<f32> {
    (0..size as u32)
        .map(|i| ((i.wrapping_mul(7) + salt) % 1000) as f32 * 1e-3)
        .collect()
}

impl Workload for Stream {
    fn name(&self) -> &str {
        match self.0 {
            StreamKind::Vadd => "vadd",
            StreamKind::Triad => "triad",
        }
    }

    fn bytes_needed(&self, size: usize) -> u64 {
        super::grid_bytes(3, size, 1, 0)
    }

    fn parallelism(&self, size: usize) -> Option<u64> {
        Some(size as u64)
    }

    fn run(
        &self,
        device: &dyn Device,
        size: usize,
        iterations: usize,
        verify: bool,
    ) -> Result<RunResult, WorkloadError> {
        if size == 0 {
            return Err(WorkloadError::Invalid(format!(
                "{}: size must be at least 1",
                self.name()
            )));
        }
        check_fits(self, device, size)?;
        let mut s = Session::new(device, &program())?;
        let (x, y) = (input(size, 1), input(size, 2));
        let a = s.upload_f32(&x)?;
        let b = s.upload_f32(&y)?;
        let c = s.scratch(size * 4)?;
        let launch = s.linear(size);
        let n = size as u32;
        // Two arrays read and one written per element; an add (vadd), a multiply and an add
        // (triad).
        let bytes = 12 * size as u64;
        for _ in 0..iterations {
            match self.0 {
                StreamKind::Vadd => s.launch_declared(
                    "vadd",
                    "vadd",
                    &launch,
                    &[Arg::Buf(&a), Arg::Buf(&b), Arg::Buf(&c), Arg::U32(n)],
                    Some(bytes),
                    Some(size as u64),
                )?,
                StreamKind::Triad => s.launch_declared(
                    "triad",
                    "triad",
                    &launch,
                    &[
                        Arg::Buf(&c),
                        Arg::Buf(&a),
                        Arg::Buf(&b),
                        Arg::F32(SCALAR),
                        Arg::U32(n),
                    ],
                    Some(bytes),
                    Some(2 * size as u64),
                )?,
            }
        }
        let got = s.download_f32(&c, size)?;
        let verification = (verify && iterations > 0).then(|| {
            let want: Vec<f32> = match self.0 {
                StreamKind::Vadd => x.iter().zip(&y).map(|(p, q)| p + q).collect(),
                StreamKind::Triad => x.iter().zip(&y).map(|(p, q)| p + SCALAR * q).collect(),
            };
            compare(&got, &want, 1e-6)
        });
        finish(self.name(), size, iterations, &s.phases, verification)
    }
}
