//! Running a spec: parameters resolved, buffers initialised on the host (compiled formulas,
//! in parallel) and uploaded, the steps of each iteration walked (host loops over sequences
//! of launches, nested), and the check: a formula, or a reference run compared with a
//! tolerance.
//!
//! This file holds the run itself; `launch` holds a launch's shape and arguments, `check`
//! the check of the result, `bytes` the conversion of values to and from a buffer's bytes.

mod amounts;
mod bytes;
mod check;
pub(super) mod footprint;
mod launch;

use std::borrow::Cow;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use super::format::{ArgSpec, CheckSpec, Expected, Init, LaunchSpec, SpecWorkload, Step};
use crate::backend::{BackendKind, Buffer, Device, ProgramSource};
use crate::workloads::session::Session;
use crate::workloads::{
    check_fits, finish, Access, RunResult, Verification, Workload, WorkloadError,
};
use bytes::{put, to_bytes};
use launch::{launch_once, shape};

/// Most launches one iteration may make: the bound on a spec's work.
pub const MAX_LOOP_LAUNCHES: f64 = 1e7;

fn invalid(spec: &SpecWorkload, what: impl std::fmt::Display) -> WorkloadError {
    WorkloadError::Invalid(format!("{}: {what}", spec.name))
}

/// `len` values uniform in [lo, hi): the sequence one generator seeded with `seed` draws, in
/// chunks of `chunk` elements on every core. Element e takes the stream's words 2e and 2e + 1
/// (one `u64` a value), so each chunk starts its own generator at its first element's word
/// and the values are the sequential draw's, bit for bit; drawn on one core, a 1 GB buffer
/// took seconds of every run of a series.
fn random_values(lo: f64, hi: f64, seed: u64, len: usize, chunk: usize) -> Vec<f64> {
    let chunk = chunk.max(1);
    let mut values = vec![0.0; len];
    values
        .par_chunks_mut(chunk)
        .enumerate()
        .for_each(|(c, out)| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            rng.set_word_pos(2 * (c * chunk) as u128);
            for v in out {
                *v = lo + (hi - lo) * rng.gen::<f64>();
            }
        });
    values
}

/// Elements one parallel task of a formula's evaluation takes ([`formula_values`]).
const FORMULA_CHUNK: usize = 1 << 14;

/// A formula's value at every element index `0..len` (the element's slot `slot`, the other
/// variables as in `vars`, `buffers` the initial contents a check formula reads), evaluated in
/// batches ([`Code::eval_range`](super::compiled::Code::eval_range)) on every core.
fn formula_values(
    f: &super::compiled::Code,
    vars: &[f64],
    slot: usize,
    buffers: &[&[f64]],
    len: usize,
) -> Result<Vec<f64>, String> {
    let mut values = vec![0.0; len];
    values
        .par_chunks_mut(FORMULA_CHUNK)
        .enumerate()
        .try_for_each(|(c, out)| f.eval_range(vars, slot, c * FORMULA_CHUNK, buffers, out))?;
    Ok(values)
}

/// What [`SpecWorkload::walk`] does at each launch: the launch and the values array.
type Visit<'a> = dyn FnMut(&LaunchSpec, &[f64]) -> Result<(), WorkloadError> + 'a;

/// One buffer's contents after a run, for `--dump`.
#[derive(Debug, Clone)]
pub struct DumpedBuffer {
    /// The buffer's name.
    pub name: String,
    /// Its element type's name (`f32`, `f64`, `u32`, `i32`).
    pub element: &'static str,
    /// Its elements.
    pub length: usize,
    /// The raw bytes, native byte order.
    pub bytes: Vec<u8>,
}

/// What one execution of the spec leaves behind.
struct Executed<'d> {
    session: Session<'d>,
    buffers: Vec<Buffer>,
    lengths: Vec<usize>,
    /// Initial contents of the buffers a check formula reads (others empty).
    initial: Vec<Vec<f64>>,
    vars: Vec<f64>,
}

impl SpecWorkload {
    /// This spec with `--param NAME=VALUE` overrides; an unknown name is an error listing
    /// the spec's parameters.
    pub fn with_params(mut self, params: &[(String, f64)]) -> Result<Self, WorkloadError> {
        for (name, value) in params {
            let slot = self
                .params
                .override_slot(name)
                .map_err(|m| invalid(&self, m))?;
            self.overrides.push((slot, *value));
        }
        Ok(self)
    }

    /// The values array at `size` for `iterations`: parameters and `iters` set.
    pub(crate) fn vars(&self, size: usize, iterations: usize) -> Result<Vec<f64>, WorkloadError> {
        let mut vars = vec![0.0; self.slots.total];
        self.params
            .fill(size, &self.overrides, &mut vars)
            .map_err(|m| invalid(self, m))?;
        vars[self.slots.iters] = iterations as f64;
        Ok(vars)
    }

    /// The distributed array's extents at `size` (with the `--param` overrides), where the
    /// spec has a `[distribution]`.
    pub fn distributed_extents(&self, size: usize) -> Result<Option<Vec<usize>>, WorkloadError> {
        let Some(d) = &self.distribution else {
            return Ok(None);
        };
        let mut vars = vec![0.0; self.params.slots()];
        self.params
            .fill(size, &self.overrides, &mut vars)
            .map_err(|m| invalid(self, m))?;
        d.extents_at(&vars).map(Some).map_err(|m| invalid(self, m))
    }

    /// The parameters' values at `size` (with the overrides), for reports.
    pub fn parameter_values(&self, size: usize) -> Result<Vec<(String, f64)>, WorkloadError> {
        self.params
            .values(size, &self.overrides)
            .map_err(|m| invalid(self, m))
    }

    pub(super) fn lengths(&self, vars: &[f64]) -> Result<Vec<usize>, WorkloadError> {
        self.buffers
            .iter()
            .map(|b| {
                let n = b
                    .length
                    .eval_count(vars)
                    .map_err(|e| invalid(self, format!("buffer {} length: {e}", b.name)))?;
                if n == 0 {
                    return Err(invalid(
                        self,
                        format!(
                            "buffer {} length: evaluates to 0; a buffer needs at least one element",
                            b.name
                        ),
                    ));
                }
                Ok(n as usize)
            })
            .collect()
    }

    /// Buffer `index`'s initial bytes (`None` for an uninitialised one) and, when `keep`,
    /// its values for a check formula.
    fn initial(
        &self,
        index: usize,
        len: usize,
        vars: &[f64],
        keep: bool,
    ) -> Result<(Option<Vec<u8>>, Vec<f64>), WorkloadError> {
        let b = &self.buffers[index];
        let values: Vec<f64> = match &b.init {
            Init::Uninitialised => return Ok((None, Vec::new())),
            Init::Constant(v) => {
                let mut one = vec![0u8; b.element.bytes()];
                put(b.element, *v, &mut one);
                let all = one.repeat(len);
                return Ok((Some(all), if keep { vec![*v; len] } else { Vec::new() }));
            }
            Init::Random { lo, hi, seed } => random_values(*lo, *hi, *seed, len, FORMULA_CHUNK),
            Init::Formula(f) if !keep => {
                // Straight into the bytes, in parallel: no f64 copy of the buffer.
                let slot = self.slots.element;
                let width = b.element.bytes();
                let mut bytes = vec![0u8; len * width];
                bytes
                    .par_chunks_mut(width * FORMULA_CHUNK)
                    .enumerate()
                    .try_for_each_init(Vec::new, |values, (c, out)| {
                        values.resize(out.len() / width, 0.0);
                        f.eval_range(vars, slot, c * FORMULA_CHUNK, &[], values)?;
                        for (cell, &v) in out.chunks_exact_mut(width).zip(values.iter()) {
                            put(b.element, v, cell);
                        }
                        Ok::<(), String>(())
                    })
                    .map_err(|e| invalid(self, format!("buffer {} init: {e}", b.name)))?;
                return Ok((Some(bytes), Vec::new()));
            }
            Init::Formula(f) => formula_values(f, vars, self.slots.element, &[], len)
                .map_err(|e| invalid(self, format!("buffer {} init: {e}", b.name)))?,
        };
        let bytes = to_bytes(b.element, &values);
        Ok((Some(bytes), if keep { values } else { Vec::new() }))
    }

    /// The spec's kernel source as a program (no host twins), with its build options.
    pub fn program(&self) -> ProgramSource {
        let name = self
            .source_path
            .file_name()
            .map_or_else(|| "spec".to_string(), |n| n.to_string_lossy().into_owned());
        ProgramSource {
            name: Cow::Owned(name),
            text: Cow::Owned(self.source_text.clone()),
            host: &[],
            dialect: self.dialect,
            origin: Cow::Owned(self.source_path.display().to_string()),
            options: self.build_options.clone(),
            launched: super::format::kernel_names(&self.steps),
            kernel_dir_error: None,
        }
    }

    /// Visit every launch of one iteration in order, with the values array as it is at
    /// that launch; loops are bounded by [`MAX_LOOP_LAUNCHES`] launches per iteration.
    fn walk(
        &self,
        steps: &[Step],
        vars: &mut [f64],
        count: &mut f64,
        visit: &mut Visit<'_>,
    ) -> Result<(), WorkloadError> {
        for step in steps {
            match step {
                Step::Launch(l) => {
                    *count += 1.0;
                    if *count > MAX_LOOP_LAUNCHES {
                        return Err(invalid(
                            self,
                            format!("one iteration would make more than {MAX_LOOP_LAUNCHES:e} launches; a spec may make at most that many"),
                        ));
                    }
                    visit(l, vars)?;
                }
                Step::Loop(lp) => {
                    let err = |m: String| invalid(self, format!("loop over {}: {m}", lp.var));
                    let eval =
                        |c: &super::compiled::Code, vars: &[f64]| c.eval(vars, &[]).map_err(err);
                    let (a, b, s) = (
                        eval(&lp.from, vars)?,
                        eval(&lp.to, vars)?,
                        eval(&lp.step, vars)?,
                    );
                    if !(a.is_finite() && b.is_finite() && s.is_finite()) || s == 0.0 {
                        return Err(err(format!(
                            "from {a} to {b} in steps of {s}: the bounds must be finite and the step non-zero"
                        )));
                    }
                    let trips = ((b - a) / s).floor() + 1.0;
                    if trips > MAX_LOOP_LAUNCHES {
                        return Err(err(format!(
                            "from {a} to {b} in steps of {s} is {trips:e} trips per iteration; a loop may make at most {MAX_LOOP_LAUNCHES:e}"
                        )));
                    }
                    let mut t = 0.0;
                    while t < trips {
                        vars[lp.slot] = a + t * s;
                        self.walk(&lp.body, vars, count, visit)?;
                        t += 1.0;
                    }
                }
            }
        }
        Ok(())
    }

    /// Upload, run `iterations` iterations, and leave the buffers on the device.
    fn execute<'d>(
        &self,
        device: &'d dyn Device,
        size: usize,
        iterations: usize,
        keep_initial: &[bool],
    ) -> Result<Executed<'d>, WorkloadError> {
        if device.info().backend == BackendKind::Host {
            return Err(invalid(
                self,
                "spec workloads run on CUDA or OpenCL devices (the host backend has no twins for your kernels); use --device opencl or --device cuda",
            ));
        }
        check_fits(self, device, size)?;
        let mut vars = self.vars(size, iterations)?;
        let lengths = self.lengths(&vars)?;
        let preferred = device.preferred_group_size();
        // Every launch of the first iteration shaped and checked before anything runs.
        let mut count = 0.0;
        let mut room = lengths.clone();
        self.walk(&self.steps, &mut vars.clone(), &mut count, &mut |l, v| {
            shape(self, l, v, preferred).map(|_| ())?;
            self.arguments_fit(l, v, &lengths, preferred, &mut room)
        })?;
        let mut session = Session::new(device, &self.program())?;
        let mut initial = Vec::with_capacity(lengths.len());
        let mut buffers = Vec::with_capacity(lengths.len());
        for (i, &len) in lengths.iter().enumerate() {
            let (bytes, values) = self.initial(i, len, &vars, keep_initial[i])?;
            // Room for the padding's work items past the length (zeros, never read back).
            let allocated = room[i]
                .checked_mul(self.buffers[i].element.bytes())
                .ok_or_else(|| {
                    invalid(
                        self,
                        format!(
                            "buffer {}: {} elements do not fit in memory",
                            self.buffers[i].name, room[i]
                        ),
                    )
                })?;
            let buf = session.device.alloc(allocated)?;
            if let Some(bytes) = bytes {
                let t = session.device.upload(&buf, &bytes)?;
                session
                    .phases
                    .add_moving("upload", t, Some(bytes.len() as u64));
            }
            buffers.push(buf);
            initial.push(values);
        }
        for iter in 0..iterations {
            vars[self.slots.iter] = iter as f64;
            let mut count = 0.0;
            let mut work = vars.clone();
            self.walk(&self.steps, &mut work, &mut count, &mut |l, v| {
                launch_once(&mut session, self, l, &buffers, v)
            })?;
        }
        Ok(Executed {
            session,
            buffers,
            lengths,
            initial,
            vars,
        })
    }

    /// Whether every buffer indexed by work item is long enough for the launch; raises
    /// `room` (elements to allocate per buffer) to the launch's padded work items.
    fn arguments_fit(
        &self,
        l: &LaunchSpec,
        vars: &[f64],
        lengths: &[usize],
        preferred: usize,
        room: &mut [usize],
    ) -> Result<(), WorkloadError> {
        let Some(launch) = shape(self, l, vars, preferred)? else {
            return Ok(());
        };
        let items = launch.global[..launch.dims]
            .iter()
            .try_fold(1usize, |a, &g| a.checked_mul(g))
            .unwrap_or(usize::MAX);
        // The work items the device runs: each global size rounded up to whole groups. A
        // kernel without an index check runs the padding's items too, so the buffers they
        // index get room for them beyond their length (`room`), never read back.
        let padded = (0..launch.dims)
            .try_fold(1usize, |a, d| {
                let padded = launch.global[d]
                    .div_ceil(launch.local[d])
                    .checked_mul(launch.local[d])?;
                a.checked_mul(padded)
            })
            .unwrap_or(usize::MAX);
        for a in &l.args {
            if let ArgSpec::Buffer(i) = a {
                let b = &self.buffers[*i];
                if b.by_work_item {
                    room[*i] = room[*i].max(padded);
                }
                if b.by_work_item && lengths[*i] < items {
                    return Err(invalid(
                        self,
                        format!(
                            "kernel {}: the launch has {items} work items but buffer {} has {} elements: a kernel indexing it by work item would access past its end; make it longer, or set indexing = \"own\" on the buffer if the kernel stays within it (then that is yours to guarantee)",
                            l.kernel, b.name, lengths[*i]
                        ),
                    ));
                }
            }
        }
        Ok(())
    }

    /// Run, check, and return the result with every buffer's final contents (`--dump`).
    pub fn run_and_dump(
        &self,
        device: &dyn Device,
        size: usize,
        iterations: usize,
        verify: bool,
    ) -> Result<(RunResult, Vec<DumpedBuffer>), WorkloadError> {
        self.run_inner(device, size, iterations, verify, true)
    }

    fn run_inner(
        &self,
        device: &dyn Device,
        size: usize,
        iterations: usize,
        verify: bool,
        dump: bool,
    ) -> Result<(RunResult, Vec<DumpedBuffer>), WorkloadError> {
        let keep: Vec<bool> = (0..self.buffers.len())
            .map(|b| match &self.check {
                Some(CheckSpec {
                    expected: Expected::Formula(f),
                    ..
                }) => verify && f.reads_buffer(b),
                _ => false,
            })
            .collect();
        let mut run = self.execute(device, size, iterations, &keep)?;
        let verification = match (&self.check, verify) {
            (Some(check), true) => Some(self.check_result(check, &mut run, size, iterations)?),
            _ => None,
        };
        let mut dumped = Vec::new();
        if dump {
            for (i, b) in self.buffers.iter().enumerate() {
                let mut bytes = vec![0u8; run.lengths[i] * b.element.bytes()];
                let t = run.session.device.download(&run.buffers[i], &mut bytes)?;
                run.session.phases.add("download", t);
                dumped.push(DumpedBuffer {
                    name: b.name.clone(),
                    element: b.element.name(),
                    length: run.lengths[i],
                    bytes,
                });
            }
        }
        let result = finish(&self.name, size, iterations, &run.session.phases, None)?;
        if let Some(v) = verification.as_ref().filter(|v| !v.passed) {
            return Err(self.mismatch(v, size, iterations));
        }
        Ok((
            RunResult {
                verification,
                ..result
            },
            dumped,
        ))
    }

    /// The failed check as one line, with a hint where the result is not finite.
    fn mismatch(&self, v: &Verification, size: usize, iterations: usize) -> WorkloadError {
        let hint = if !v.max_abs_error.is_finite() && iterations > 1 {
            format!("; the result holds inf or NaN after {iterations} iterations: a program meant to run once (one that accumulates into its output, for example) needs --iters 1 or iterations = 1 in the spec")
        } else if !v.max_abs_error.is_finite() {
            "; the result holds inf or NaN".to_string()
        } else {
            String::new()
        };
        invalid(
            self,
            format!(
                "check failed at size {size}: max abs error {:.3e}, max rel error {:.3e} (tolerance {:.0e}){hint}",
                v.max_abs_error, v.max_rel_error, v.tolerance
            ),
        )
    }
}

impl Workload for SpecWorkload {
    fn name(&self) -> &str {
        &self.name
    }

    fn bytes_needed(&self, size: usize) -> u64 {
        self.vars(size, 1)
            .and_then(|v| self.lengths(&v))
            .map_or(0, |l| {
                l.iter().zip(&self.buffers).fold(0u64, |sum, (&n, b)| {
                    sum.saturating_add((n as u64).saturating_mul(b.element.bytes() as u64))
                })
            })
    }

    fn default_iterations(&self) -> Option<usize> {
        self.default_iterations
    }

    fn upload_bytes(&self, size: usize) -> Option<u64> {
        let lengths = self.vars(size, 1).and_then(|v| self.lengths(&v)).ok()?;
        Some(
            lengths
                .iter()
                .zip(&self.buffers)
                .filter(|(_, b)| !matches!(b.init, Init::Uninitialised))
                .fold(0u64, |sum, (&n, b)| {
                    sum.saturating_add((n as u64).saturating_mul(b.element.bytes() as u64))
                }),
        )
    }

    fn access_patterns(&self) -> Vec<(&str, Access)> {
        super::declared::access_patterns(&self.steps)
    }

    fn undeclared_access(&self) -> Vec<&str> {
        super::declared::undeclared_access(&self.steps)
    }

    fn source_notes(&self) -> Vec<String> {
        super::declared::source_notes(self)
    }

    fn parallelism(&self, size: usize) -> Option<u64> {
        // The widest launch of the first iteration (on a typical 256-wide group).
        let mut vars = self.vars(size, 1).ok()?;
        let mut widest = 0u64;
        let mut count = 0.0;
        self.walk(&self.steps, &mut vars, &mut count, &mut |l, v| {
            if let Some(launch) = shape(self, l, v, 256)? {
                let items = launch.global[..launch.dims]
                    .iter()
                    .fold(1u64, |a, &g| a.saturating_mul(g as u64));
                widest = widest.max(items);
            }
            Ok(())
        })
        .ok()?;
        (widest > 0).then_some(widest)
    }

    fn declared_amounts(
        &self,
        size: usize,
        iterations: usize,
    ) -> Option<Vec<crate::workloads::DeclaredAmounts>> {
        amounts::declared_amounts(self, size, iterations, false).ok()
    }

    fn declared_amounts_with_footprints(
        &self,
        size: usize,
        iterations: usize,
    ) -> Option<Vec<crate::workloads::DeclaredAmounts>> {
        amounts::declared_amounts(self, size, iterations, true).ok()
    }

    fn declarations_error(&self, size: usize, iterations: usize) -> Option<String> {
        amounts::declared_amounts(self, size, iterations, false)
            .err()
            .map(|e| e.to_string())
    }

    fn stored_spec(&self) -> Option<super::StoredSpec> {
        let params = self
            .overrides
            .iter()
            .filter_map(|&(slot, v)| {
                self.params
                    .named
                    .get(slot.checked_sub(1)?)
                    .map(|(n, _)| (n.clone(), v))
            })
            .collect();
        Some(super::StoredSpec {
            file: self.path.display().to_string(),
            text: self.text.clone(),
            source: Some(self.source_text.clone()),
            params,
        })
    }

    fn run(
        &self,
        device: &dyn Device,
        size: usize,
        iterations: usize,
        verify: bool,
    ) -> Result<RunResult, WorkloadError> {
        self.run_inner(device, size, iterations, verify, false)
            .map(|(r, _)| r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_values_are_the_sequential_draw_in_any_chunks() {
        let (lo, hi) = (-1.0, 1.0);
        let mut rng = ChaCha8Rng::seed_from_u64(1511);
        let want: Vec<f64> = (0..1000)
            .map(|_| lo + (hi - lo) * rng.gen::<f64>())
            .collect();
        for chunk in [1, 7, 64, 333, 1000, 4096] {
            let got = random_values(lo, hi, 1511, 1000, chunk);
            assert!(
                got.iter()
                    .zip(&want)
                    .all(|(a, b)| a.to_bits() == b.to_bits()),
                "chunks of {chunk}"
            );
        }
    }
}
