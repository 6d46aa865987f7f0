//! One run of a workload on a device: the compiled program and the phase recorder, so each
//! launch and transfer lands in the phase table under its own name.

use crate::backend::{Arg, Buffer, Device, Launch, Program, ProgramSource};

use super::{PhaseRecorder, WorkloadError};

/// A device, a compiled program and the phases recorded so far.
pub struct Session<'d> {
    /// The device.
    pub device: &'d dyn Device,
    program: Program,
    /// Phase times.
    pub phases: PhaseRecorder,
}

impl<'d> Session<'d> {
    /// Compile `source` for `device`.
    pub fn new(device: &'d dyn Device, source: &ProgramSource) -> Result<Self, WorkloadError> {
        Ok(Session {
            device,
            program: device.compile(source)?,
            phases: PhaseRecorder::new(),
        })
    }

    /// Launch `kernel`; its device time is added to the phase of the same name.
    pub fn launch(
        &mut self,
        kernel: &str,
        launch: &Launch,
        args: &[Arg<'_>],
    ) -> Result<(), WorkloadError> {
        self.launch_as(kernel, kernel, launch, args)
    }

    /// Launch `kernel` and record it as `phase`.
    pub fn launch_as(
        &mut self,
        phase: &str,
        kernel: &str,
        launch: &Launch,
        args: &[Arg<'_>],
    ) -> Result<(), WorkloadError> {
        self.launch_moving(phase, kernel, launch, args, None)
    }

    /// Launch `kernel` as `phase`, which must move at least `bytes` (for its GB/s).
    pub fn launch_moving(
        &mut self,
        phase: &str,
        kernel: &str,
        launch: &Launch,
        args: &[Arg<'_>],
        bytes: Option<u64>,
    ) -> Result<(), WorkloadError> {
        self.launch_declared(phase, kernel, launch, args, bytes, None)
    }

    /// Launch `kernel` as `phase`, which moves at least `bytes` and runs `flops`
    /// floating-point operations, each where declared.
    pub fn launch_declared(
        &mut self,
        phase: &str,
        kernel: &str,
        launch: &Launch,
        args: &[Arg<'_>],
        bytes: Option<u64>,
        flops: Option<u64>,
    ) -> Result<(), WorkloadError> {
        let items: u64 = launch.global.iter().map(|&g| g as u64).product();
        self.device
            .before_launch(bytes.unwrap_or(items.saturating_mul(4)))?;
        let t = self.device.launch(&self.program, kernel, launch, args)?;
        let threads = self.device.last_launch_threads();
        self.phases
            .add_launch(phase, t, bytes, Some(items), flops, threads);
        Ok(())
    }

    /// A buffer holding `values`, recorded as the `upload` phase.
    pub fn upload_f32(&mut self, values: &[f32]) -> Result<Buffer, WorkloadError> {
        self.upload_bytes(bytemuck::cast_slice(values))
    }

    /// A buffer holding `values`, recorded as the `upload` phase.
    pub fn upload_u32(&mut self, values: &[u32]) -> Result<Buffer, WorkloadError> {
        self.upload_bytes(bytemuck::cast_slice(values))
    }

    fn upload_bytes(&mut self, bytes: &[u8]) -> Result<Buffer, WorkloadError> {
        let buf = self.device.alloc(bytes.len())?;
        let t = self.device.upload(&buf, bytes)?;
        self.phases
            .add_moving("upload", t, Some(bytes.len() as u64));
        Ok(buf)
    }

    /// Overwrite `buf` with `values`, recorded as the `upload` phase.
    pub fn write_f32(&mut self, buf: &Buffer, values: &[f32]) -> Result<(), WorkloadError> {
        let t = self.device.upload(buf, bytemuck::cast_slice(values))?;
        self.phases.add("upload", t);
        Ok(())
    }

    /// `count` floats read back, recorded as the `download` phase.
    pub fn download_f32(&mut self, buf: &Buffer, count: usize) -> Result<Vec<f32>, WorkloadError> {
        self.download_f32_as("download", buf, count)
    }

    /// [`Session::download_f32`] recorded as `phase` (a per-iteration read such as SOR's
    /// EPS, kept apart from the final download).
    pub fn download_f32_as(
        &mut self,
        phase: &str,
        buf: &Buffer,
        count: usize,
    ) -> Result<Vec<f32>, WorkloadError> {
        let mut values = vec![0f32; count];
        // The host array a program reads into already exists: its pages are not the
        // download's cost.
        crate::backend::touch_pages(&mut values);
        let t = self
            .device
            .download(buf, bytemuck::cast_slice_mut(&mut values))?;
        self.phases.add_moving(
            phase,
            t,
            Some(std::mem::size_of_val(values.as_slice()) as u64),
        );
        Ok(values)
    }

    /// A zeroed scratch buffer of `bytes` (not timed: allocation is not a phase).
    pub fn scratch(&mut self, bytes: usize) -> Result<Buffer, WorkloadError> {
        let buf = self.device.alloc(bytes)?;
        self.device.upload(&buf, &vec![0u8; bytes])?;
        Ok(buf)
    }

    /// A 1-D launch over `n` executors in the device's preferred groups.
    pub fn linear(&self, n: usize) -> Launch {
        Launch::linear(n, self.device.preferred_group_size())
    }

    /// A 3-D launch over an n×n×n cube (groups along the fastest axis).
    pub fn cube(&self, n: usize) -> Launch {
        Launch::cube(n, self.device.preferred_group_size())
    }

    /// A 2-D launch over `x × y` executors (x fastest).
    pub fn grid2(&self, x: usize, y: usize) -> Launch {
        Launch::tiles2(x, y, self.device.preferred_group_size())
    }
}

/// Compare a device result with the host reference: the largest absolute error, and the
/// largest error relative to the reference's largest magnitude (so values near zero do not
/// inflate it).
pub fn compare<T: Copy + Into<f64>>(got: &[T], want: &[T], tolerance: f64) -> super::Verification {
    let scale = want
        .iter()
        .fold(0.0f64, |m, &v| m.max(v.into().abs()))
        .max(1e-30);
    let mut max_abs = if got.len() == want.len() {
        0.0f64
    } else {
        f64::INFINITY
    };
    for (g, w) in got.iter().zip(want) {
        let e = ((*g).into() - (*w).into()).abs();
        max_abs = max_abs.max(if e.is_nan() { f64::INFINITY } else { e });
    }
    let max_rel = max_abs / scale;
    super::Verification {
        max_abs_error: max_abs,
        max_rel_error: max_rel,
        tolerance,
        passed: max_rel <= tolerance,
        against: None,
    }
}

/// Compare a grid and its per-iteration EPS history with the reference's, as one vector
/// (EPS values are scaled like the grid's).
pub fn compare_with_history(
    mut got: Vec<f32>,
    history: &[f32],
    (mut want, want_history): (Vec<f32>, Vec<f32>),
    tolerance: f64,
) -> super::Verification {
    got.extend(history);
    want.extend(want_history);
    compare(&got, &want, tolerance)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_corrupted_result_is_caught() {
        let want = vec![1.0f32, 2.0, 4.0];
        assert!(compare(&want, &want, 1e-6).passed);
        let mut got = want.clone();
        got[1] = 2.01;
        let v = compare(&got, &want, 1e-3);
        assert!(!v.passed);
        assert!((v.max_abs_error - 0.01).abs() < 1e-6);
        assert!(!compare(&[1.0, f32::NAN, 4.0], &want, 1.0).passed);
        assert!(!compare(&[1.0], &want, 1.0).passed, "a short result fails");
    }
}
