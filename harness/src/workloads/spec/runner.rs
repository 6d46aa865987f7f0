//! Running a spec: buffers initialised on the host and uploaded, the launch sequence of
//! each iteration (host loops unrolled into one launch per step), and the optional check.

use std::borrow::Cow;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

use super::expr::Env;
use super::format::{ArgSpec, Element, Init, LaunchSpec, SpecWorkload};
use crate::backend::{Arg, BackendKind, Buffer, Device, Launch, ProgramSource};
use crate::workloads::session::{compare, Session};
use crate::workloads::{check_fits, finish, RunResult, Workload, WorkloadError};

/// Most launches one host loop may make per iteration: the bound on a spec's work.
pub const MAX_LOOP_LAUNCHES: f64 = 1e7;

fn invalid(spec: &SpecWorkload, what: impl std::fmt::Display) -> WorkloadError {
    WorkloadError::Invalid(format!("{}: {what}", spec.name))
}

impl SpecWorkload {
    fn env(&self, size: usize, iterations: usize) -> Env<'static> {
        let mut env = Env::with_size(size);
        env.vars.insert("iters", iterations as f64);
        env
    }

    fn lengths(&self, env: &Env<'_>) -> Result<Vec<usize>, WorkloadError> {
        self.buffers
            .iter()
            .map(|b| {
                let n = b
                    .length
                    .eval_count(env)
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

    fn initial(&self, index: usize, len: usize, env: &Env<'_>) -> Result<Vec<f64>, WorkloadError> {
        let b = &self.buffers[index];
        Ok(match &b.init {
            Init::Constant(v) => vec![*v; len],
            Init::Random { lo, hi, seed } => {
                let mut rng = ChaCha8Rng::seed_from_u64(*seed);
                (0..len)
                    .map(|_| lo + (hi - lo) * rng.gen::<f64>())
                    .collect()
            }
            Init::Formula(f) => {
                let mut env = env.clone();
                let mut out = Vec::with_capacity(len);
                for i in 0..len {
                    env.vars.insert("i", i as f64);
                    out.push(
                        f.eval(&env)
                            .map_err(|e| invalid(self, format!("buffer {} init: {e}", b.name)))?,
                    );
                }
                out
            }
        })
    }

    /// The spec's kernel source as a program (no host twins).
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
        }
    }
}

fn to_bytes(element: Element, values: &[f64]) -> Vec<u8> {
    values
        .iter()
        .flat_map(|&v| match element {
            Element::F32 => (v as f32).to_ne_bytes(),
            Element::U32 => (v as u32).to_ne_bytes(),
            Element::I32 => (v as i32).to_ne_bytes(),
        })
        .collect()
}

fn from_bytes(element: Element, bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| {
            let w = [c[0], c[1], c[2], c[3]];
            match element {
                Element::F32 => f32::from_ne_bytes(w),
                Element::U32 => u32::from_ne_bytes(w) as f32,
                Element::I32 => i32::from_ne_bytes(w) as f32,
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

fn shape(
    spec: &SpecWorkload,
    l: &LaunchSpec,
    env: &Env<'_>,
    preferred: usize,
) -> Result<Launch, WorkloadError> {
    let eval = |e: &super::expr::Expr, what: &str| {
        e.eval_count(env)
            .map(|v| v as usize)
            .map_err(|m| invalid(spec, format!("kernel {} {what}: {m}", l.kernel)))
    };
    let mut launch = Launch {
        dims: l.global.len(),
        global: [1; 3],
        local: [1; 3],
    };
    for (d, g) in l.global.iter().enumerate() {
        launch.global[d] = eval(g, "global size")?.max(1);
    }
    match &l.local {
        Some(local) => {
            for (d, v) in local.iter().enumerate() {
                launch.local[d] = eval(v, "local size")?.max(1);
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
    Ok(launch)
}

fn scalar(
    spec: &SpecWorkload,
    element: Element,
    value: f64,
    kernel: &str,
) -> Result<Arg<'static>, WorkloadError> {
    Ok(match element {
        Element::F32 => Arg::F32(value as f32),
        Element::I32 if value.fract() == 0.0 => Arg::U32((value as i32) as u32),
        Element::U32 if value.fract() == 0.0 && value >= 0.0 => Arg::U32(value as u32),
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
    (buffers, lengths): (&[Buffer], &[usize]),
    env: &Env<'_>,
) -> Result<(), WorkloadError> {
    let launch = shape(spec, l, env, s.device.preferred_group_size())?;
    let items = launch.global[..launch.dims]
        .iter()
        .try_fold(1usize, |a, &g| a.checked_mul(g))
        .unwrap_or(usize::MAX);
    for a in &l.args {
        if let ArgSpec::Buffer(i) = a {
            let b = &spec.buffers[*i];
            if b.by_work_item && lengths[*i] < items {
                return Err(invalid(
                    spec,
                    format!(
                        "kernel {}: the launch has {items} work items but buffer {} has {} elements: a kernel indexing it by work item would access past its end; make it longer, or set indexing = \"own\" on the buffer if the kernel stays within it (then that is yours to guarantee)",
                        l.kernel, b.name, lengths[*i]
                    ),
                ));
            }
        }
    }
    let mut args = Vec::with_capacity(l.args.len());
    for a in &l.args {
        args.push(match a {
            ArgSpec::Buffer(i) => Arg::Buf(&buffers[*i]),
            ArgSpec::Scalar(element, e) => {
                let v = e
                    .eval(env)
                    .map_err(|m| invalid(spec, format!("kernel {}: {m}", l.kernel)))?;
                scalar(spec, *element, v, &l.kernel)?
            }
        });
    }
    s.launch(&l.kernel, &launch, &args)
}

impl Workload for SpecWorkload {
    fn name(&self) -> &str {
        &self.name
    }

    fn bytes_needed(&self, size: usize) -> u64 {
        self.lengths(&self.env(size, 1)).map_or(0, |l| {
            l.iter().fold(0u64, |sum, &n| {
                sum.saturating_add((n as u64).saturating_mul(4))
            })
        })
    }

    fn run(
        &self,
        device: &dyn Device,
        size: usize,
        iterations: usize,
        verify: bool,
    ) -> Result<RunResult, WorkloadError> {
        if device.info().backend == BackendKind::Host {
            return Err(invalid(
                self,
                format!(
                    "spec workloads run on CUDA or OpenCL devices; the host has no twin for {}",
                    self.launches[0].kernel
                ),
            ));
        }
        check_fits(self, device, size)?;
        let mut env = self.env(size, iterations);
        let lengths = self.lengths(&env)?;
        let mut s = Session::new(device, &self.program())?;
        let mut initial = Vec::with_capacity(lengths.len());
        let mut buffers = Vec::with_capacity(lengths.len());
        for (i, &len) in lengths.iter().enumerate() {
            let values = self.initial(i, len, &env)?;
            let bytes = to_bytes(self.buffers[i].element, &values);
            let buf = s.device.alloc(bytes.len())?;
            let t = s.device.upload(&buf, &bytes)?;
            s.phases.add("upload", t);
            buffers.push(buf);
            initial.push(values);
        }
        for _ in 0..iterations {
            for l in &self.launches {
                match &l.host_loop {
                    None => launch_once(&mut s, self, l, (&buffers, &lengths), &env)?,
                    Some((from, to)) => {
                        let err =
                            |m: String| invalid(self, format!("kernel {} loop: {m}", l.kernel));
                        let (a, b) = (from.eval(&env).map_err(err)?, to.eval(&env).map_err(err)?);
                        if b - a + 1.0 > MAX_LOOP_LAUNCHES {
                            return Err(err(format!(
                                "k from {a} to {b} is {:e} launches per iteration; a loop may make at most {MAX_LOOP_LAUNCHES:e}",
                                b - a + 1.0
                            )));
                        }
                        let mut k = a;
                        while k <= b {
                            env.vars.insert("k", k);
                            launch_once(&mut s, self, l, (&buffers, &lengths), &env)?;
                            k += 1.0;
                        }
                    }
                }
            }
        }
        let verification = match (&self.check, verify) {
            (Some(check), true) => {
                let element = self.buffers[check.buffer].element;
                let mut bytes = vec![0u8; lengths[check.buffer] * 4];
                let t = s.device.download(&buffers[check.buffer], &mut bytes)?;
                s.phases.add("download", t);
                let got = from_bytes(element, &bytes);
                let mut env = env.clone();
                for (b, values) in self.buffers.iter().zip(&initial) {
                    env.buffers.insert(b.name.as_str(), values.as_slice());
                }
                let mut want = Vec::with_capacity(got.len());
                for i in 0..got.len() {
                    env.vars.insert("i", i as f64);
                    let v = check
                        .formula
                        .eval(&env)
                        .map_err(|m| invalid(self, format!("check: {m}")))?;
                    want.push(v as f32);
                }
                Some(compare(&got, &want, check.tolerance))
            }
            _ => None,
        };
        finish(&self.name, size, iterations, &s.phases, verification)
    }
}
