//! Running a spec: parameters resolved, buffers initialised on the host (compiled formulas,
//! in parallel) and uploaded, the steps of each iteration walked (host loops over sequences
//! of launches, nested), and the check: a formula, or a reference run compared with a
//! tolerance.

use std::borrow::Cow;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use rayon::prelude::*;

use super::format::{ArgSpec, CheckSpec, Element, Expected, Init, LaunchSpec, SpecWorkload, Step};
use crate::backend::{discover, select, Arg, BackendKind, Buffer, Device, Launch, ProgramSource};
use crate::workloads::session::{compare, Session};
use crate::workloads::{
    check_fits, finish, Access, RunResult, Verification, Workload, WorkloadError,
};

/// Most launches one iteration may make: the bound on a spec's work.
pub const MAX_LOOP_LAUNCHES: f64 = 1e7;

fn invalid(spec: &SpecWorkload, what: impl std::fmt::Display) -> WorkloadError {
    WorkloadError::Invalid(format!("{}: {what}", spec.name))
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
    fn vars(&self, size: usize, iterations: usize) -> Result<Vec<f64>, WorkloadError> {
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

    fn lengths(&self, vars: &[f64]) -> Result<Vec<usize>, WorkloadError> {
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
            Init::Random { lo, hi, seed } => {
                let mut rng = ChaCha8Rng::seed_from_u64(*seed);
                (0..len)
                    .map(|_| lo + (hi - lo) * rng.gen::<f64>())
                    .collect()
            }
            Init::Formula(f) if !keep => {
                // Straight into the bytes, in parallel: no f64 copy of the buffer.
                let slot = self.slots.element;
                let width = b.element.bytes();
                let mut bytes = vec![0u8; len * width];
                const CHUNK: usize = 1 << 14;
                bytes
                    .par_chunks_mut(width * CHUNK)
                    .enumerate()
                    .try_for_each(|(c, out)| {
                        let mut vars = vars.to_vec();
                        for (k, cell) in out.chunks_exact_mut(width).enumerate() {
                            vars[slot] = (c * CHUNK + k) as f64;
                            put(b.element, f.eval(&vars, &[])?, cell);
                        }
                        Ok::<(), String>(())
                    })
                    .map_err(|e| invalid(self, format!("buffer {} init: {e}", b.name)))?;
                return Ok((Some(bytes), Vec::new()));
            }
            Init::Formula(f) => {
                let slot = self.slots.element;
                (0..len)
                    .into_par_iter()
                    .map_init(
                        || vars.to_vec(),
                        |vars, i| {
                            vars[slot] = i as f64;
                            f.eval(vars, &[])
                        },
                    )
                    .collect::<Result<Vec<f64>, String>>()
                    .map_err(|e| invalid(self, format!("buffer {} init: {e}", b.name)))?
            }
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
                session.phases.add("upload", t);
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

    fn download_values(
        &self,
        run: &mut Executed<'_>,
        index: usize,
    ) -> Result<Vec<f64>, WorkloadError> {
        let element = self.buffers[index].element;
        let mut bytes = vec![0u8; run.lengths[index] * element.bytes()];
        let t = run
            .session
            .device
            .download(&run.buffers[index], &mut bytes)?;
        run.session.phases.add("download", t);
        Ok(from_bytes(element, &bytes))
    }

    fn check_result(
        &self,
        check: &CheckSpec,
        run: &mut Executed<'_>,
        size: usize,
        iterations: usize,
    ) -> Result<Verification, WorkloadError> {
        let got = self.download_values(run, check.buffer)?;
        let mut described = "the spec's formula".to_string();
        let want: Vec<f64> = match &check.expected {
            Expected::Formula(f) => {
                let initial: Vec<&[f64]> = run.initial.iter().map(Vec::as_slice).collect();
                let slot = self.slots.element;
                let vars = &run.vars;
                (0..got.len())
                    .into_par_iter()
                    .map_init(
                        || vars.clone(),
                        |vars, i| {
                            vars[slot] = i as f64;
                            f.eval(vars, &initial)
                        },
                    )
                    .collect::<Result<Vec<f64>, String>>()
                    .map_err(|m| invalid(self, format!("check: {m}")))?
            }
            Expected::Reference { spec, device } => {
                let (values, against) = self.reference_values(
                    spec.as_deref(),
                    device.as_ref(),
                    run,
                    check,
                    size,
                    iterations,
                )?;
                described = against;
                values
            }
        };
        // Compare in the buffer's own precision.
        let verification = match self.buffers[check.buffer].element {
            Element::F64 => compare(&got, &want, check.tolerance),
            _ => {
                let narrow = |v: &[f64]| v.iter().map(|&x| x as f32).collect::<Vec<f32>>();
                compare(&narrow(&got), &narrow(&want), check.tolerance)
            }
        };
        Ok(Verification {
            against: Some(described),
            ..verification
        })
    }

    /// The reference run's values of the checked buffer: `spec` (this one when `None`)
    /// run on `device` (the measured one when `None`) with the same size, parameters and
    /// iterations.
    fn reference_values(
        &self,
        spec: Option<&SpecWorkload>,
        device: Option<&crate::backend::DeviceSelector>,
        run: &Executed<'_>,
        check: &CheckSpec,
        size: usize,
        iterations: usize,
    ) -> Result<(Vec<f64>, String), WorkloadError> {
        let measured = run.session.device;
        let list;
        let reference_device: &dyn Device = match device {
            None => measured,
            Some(selector) => {
                list = discover();
                let index = select(&list, selector)
                    .map_err(|e| invalid(self, format!("check: the reference device: {e}")))?;
                list.devices[index].as_ref()
            }
        };
        if spec.is_none()
            && reference_device.info().name == measured.info().name
            && reference_device.info().backend == measured.info().backend
        {
            return Err(invalid(
                self,
                format!(
                    "check: the reference device is the measured device ({}): the run would be compared with itself; name another device in check.device",
                    measured.info().name
                ),
            ));
        }
        let named = self.parameter_values(size)?;
        let reference = match spec {
            None => self.clone(),
            Some(other) => {
                let mut other = other.clone();
                for (name, value) in &named {
                    if let Ok(slot) = other.params.override_slot(name) {
                        other.overrides.push((slot, *value));
                    }
                }
                other
            }
        };
        let keep = vec![false; reference.buffers.len()];
        let mut done = reference
            .execute(reference_device, size, iterations, &keep)
            .map_err(|e| invalid(self, format!("check: the reference run: {e}")))?;
        let name = &self.buffers[check.buffer].name;
        let index = reference
            .buffers
            .iter()
            .position(|b| &b.name == name)
            .ok_or_else(|| invalid(self, format!("check: the reference has no buffer {name}")))?;
        if done.lengths[index] != run.lengths[check.buffer] {
            return Err(invalid(
                self,
                format!(
                    "check: the reference's buffer {name} has {} elements, this run's {}",
                    done.lengths[index], run.lengths[check.buffer]
                ),
            ));
        }
        let what = match spec {
            None => "this spec".to_string(),
            Some(other) => other
                .path
                .file_name()
                .map_or_else(|| other.name.clone(), |f| f.to_string_lossy().into_owned()),
        };
        let against = format!("{what} on {}", reference_device.info().name);
        Ok((reference.download_values(&mut done, index)?, against))
    }
}

/// Write `v` as one `element` into `cell` (its width), native byte order.
fn put(element: Element, v: f64, cell: &mut [u8]) {
    match element {
        Element::F32 => cell.copy_from_slice(&(v as f32).to_ne_bytes()),
        Element::F64 => cell.copy_from_slice(&v.to_ne_bytes()),
        Element::U32 => cell.copy_from_slice(&(v as u32).to_ne_bytes()),
        Element::I32 => cell.copy_from_slice(&(v as i32).to_ne_bytes()),
    }
}

fn to_bytes(element: Element, values: &[f64]) -> Vec<u8> {
    let width = element.bytes();
    let mut out = vec![0u8; values.len() * width];
    out.par_chunks_mut(width * 4096)
        .zip(values.par_chunks(4096))
        .for_each(|(bytes, values)| {
            for (b, &v) in bytes.chunks_exact_mut(width).zip(values) {
                put(element, v, b);
            }
        });
    out
}

fn from_bytes(element: Element, bytes: &[u8]) -> Vec<f64> {
    bytes
        .chunks_exact(element.bytes())
        .map(|c| match element {
            Element::F64 => f64::from_ne_bytes(c.try_into().unwrap_or([0; 8])),
            _ => {
                let w = [c[0], c[1], c[2], c[3]];
                match element {
                    Element::F32 => f64::from(f32::from_ne_bytes(w)),
                    Element::U32 => f64::from(u32::from_ne_bytes(w)),
                    _ => f64::from(i32::from_ne_bytes(w)),
                }
            }
        })
        .collect()
}

/// The largest power of two ≤ `preferred` that divides `global`, so no executor is padded.
fn dividing_group(global: usize, preferred: usize) -> usize {
    let mut l = preferred.max(1).next_power_of_two();
    while l > 1 && (l > preferred || !global.is_multiple_of(l)) {
        l /= 2;
    }
    l
}

/// The launch's shape, or `None` when a global size is 0 (the launch is skipped: nothing
/// to do, and nothing counted).
fn shape(
    spec: &SpecWorkload,
    l: &LaunchSpec,
    vars: &[f64],
    preferred: usize,
) -> Result<Option<Launch>, WorkloadError> {
    let eval = |e: &super::compiled::Code, what: &str| {
        e.eval_count(vars)
            .map(|v| v as usize)
            .map_err(|m| invalid(spec, format!("kernel {} {what}: {m}", l.kernel)))
    };
    let mut launch = Launch {
        dims: l.global.len(),
        global: [1; 3],
        local: [1; 3],
    };
    for (d, g) in l.global.iter().enumerate() {
        launch.global[d] = eval(g, "global size")?;
        if launch.global[d] == 0 {
            return Ok(None);
        }
    }
    match &l.local {
        Some(local) => {
            for (d, v) in local.iter().enumerate() {
                let n = eval(v, "local size")?;
                if n == 0 {
                    return Err(invalid(
                        spec,
                        format!("kernel {}: a local size of 0", l.kernel),
                    ));
                }
                launch.local[d] = n;
            }
        }
        None => {
            let per_dim = match launch.dims {
                1 => preferred,
                2 => (preferred as f64).sqrt() as usize,
                _ => (preferred as f64).cbrt() as usize,
            };
            for d in 0..launch.dims {
                launch.local[d] = dividing_group(launch.global[d], per_dim);
            }
        }
    }
    Ok(Some(launch))
}

fn scalar(
    spec: &SpecWorkload,
    element: Element,
    value: f64,
    kernel: &str,
) -> Result<Arg<'static>, WorkloadError> {
    Ok(match element {
        Element::F32 => Arg::F32(value as f32),
        Element::F64 => Arg::F64(value),
        Element::I32
            if value.fract() == 0.0
                && value >= f64::from(i32::MIN)
                && value <= f64::from(i32::MAX) =>
        {
            Arg::U32((value as i32) as u32)
        }
        Element::U32 if value.fract() == 0.0 && value >= 0.0 && value <= f64::from(u32::MAX) => {
            Arg::U32(value as u32)
        }
        _ => {
            return Err(invalid(
                spec,
                format!("kernel {kernel}: argument {value} does not fit its integer type"),
            ))
        }
    })
}

fn launch_once(
    s: &mut Session<'_>,
    spec: &SpecWorkload,
    l: &LaunchSpec,
    buffers: &[Buffer],
    vars: &[f64],
) -> Result<(), WorkloadError> {
    let Some(launch) = shape(spec, l, vars, s.device.preferred_group_size())? else {
        return Ok(());
    };
    let mut args = Vec::with_capacity(l.args.len());
    for a in &l.args {
        args.push(match a {
            ArgSpec::Buffer(i) => Arg::Buf(&buffers[*i]),
            ArgSpec::Scalar(element, e) => {
                let v = e
                    .eval(vars, &[])
                    .map_err(|m| invalid(spec, format!("kernel {}: {m}", l.kernel)))?;
                scalar(spec, *element, v, &l.kernel)?
            }
        });
    }
    let count = |code: &Option<super::compiled::Code>, what: &str| {
        code.as_ref()
            .map(|c| {
                c.eval_count(vars)
                    .map_err(|m| invalid(spec, format!("kernel {} {what}: {m}", l.kernel)))
            })
            .transpose()
    };
    let bytes = count(&l.bytes, "bytes")?;
    let flops = count(&l.flops, "flops")?;
    s.launch_declared(&l.kernel, &l.kernel, &launch, &args, bytes, flops)
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

    fn access_patterns(&self) -> Vec<(&str, Access)> {
        super::declared::access_patterns(&self.steps)
    }

    fn undeclared_access(&self) -> Vec<&str> {
        super::declared::undeclared_access(&self.steps)
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
    fn bytes_round_trip_every_element_type() {
        let values = [0.0f64, 1.0, 2.5, 7.0];
        for e in [Element::F32, Element::F64, Element::U32, Element::I32] {
            let want: Vec<f64> = values
                .iter()
                .map(|&v| {
                    if e == Element::U32 || e == Element::I32 {
                        v.floor()
                    } else {
                        v
                    }
                })
                .collect();
            assert_eq!(from_bytes(e, &to_bytes(e, &values)), want, "{e:?}");
        }
        assert_eq!(to_bytes(Element::F64, &[1.0]).len(), 8);
        assert_eq!(
            from_bytes(Element::I32, &to_bytes(Element::I32, &[-3.0])),
            [-3.0]
        );
    }
}
