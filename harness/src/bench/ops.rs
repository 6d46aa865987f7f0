//! Operation time τ (docs/models.md §1): the latency of one fp32 add and one FMA in a dependent
//! chain of a single executor, and the device-wide FMA throughput.
//!
//! Each latency sample runs the chain for `k` and `2k` iterations (8 operations each) and
//! takes the difference per operation, which cancels launch overhead and the loads and
//! stores around the chain.

use serde::{Deserialize, Serialize};

use super::kernels::fma_throughput_value;
use super::{verify, BenchContext, BenchError, Measured};
use crate::backend::{download_f32, upload_f32, Arg, DeviceClass, Launch};

/// Results of the operation benchmarks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct OpTimes {
    /// Dependent fp32 add latency, ns.
    pub add_latency_ns: f64,
    /// Its 95 % CI, ns.
    pub add_ci95_ns: [f64; 2],
    /// Dependent fp32 FMA latency, ns.
    pub fma_latency_ns: f64,
    /// Its 95 % CI, ns.
    pub fma_ci95_ns: [f64; 2],
    /// Device-wide FMA throughput, operations per second (an FMA counts as one operation).
    pub fma_ops_per_second: f64,
    /// Its 95 % CI.
    pub fma_ops_ci95: [f64; 2],
    /// Executors used for the throughput kernel.
    pub throughput_executors: u64,
}

/// Iterations of the dependent chains (8 operations each); the same with `--quick`, which
/// takes fewer samples of the same quantity.
fn chain_iters() -> u32 {
    1 << 14
}

fn chain_latency(
    ctx: &mut BenchContext<'_>,
    kernel: &str,
    init: &[f32],
    expected: impl Fn(u32) -> f32,
) -> Result<Measured, BenchError> {
    let data = upload_f32(ctx.device, init)?;
    let iters = chain_iters();
    let result_at = init.len() - 1;
    ctx.launch(
        kernel,
        &Launch::single(),
        &[Arg::Buf(&data), Arg::U32(iters)],
    )?;
    let got = download_f32(ctx.device, &data, init.len())?[result_at];
    let want = expected(iters);
    verify(close(got, want), kernel, || {
        format!("chain gave {got}, host {want}")
    })?;
    let name = format!("{kernel}_latency_s");
    let run = |ctx: &BenchContext<'_>, k: u32| -> Result<f64, BenchError> {
        Ok(ctx
            .launch(kernel, &Launch::single(), &[Arg::Buf(&data), Arg::U32(k)])?
            .0)
    };
    let m = ctx.measure(&name, || {
        Ok((run(ctx, 2 * iters)? - run(ctx, iters)?) / f64::from(8 * iters))
    })?;
    ctx.record(&name, &m);
    Ok(m)
}

/// Relative agreement to 1e-5 (the chains are exact IEEE operations on both sides, so
/// this only absorbs a compiler that contracts differently).
fn close(a: f32, b: f32) -> bool {
    (a - b).abs() <= 1e-5 * b.abs().max(1e-30) || a == b
}

/// Measure τ and the throughput.
pub fn measure_ops(ctx: &mut BenchContext<'_>) -> Result<OpTimes, BenchError> {
    let add = chain_latency(ctx, "add_chain", &[1.0, 1e-7, 0.0], |iters| {
        (0..iters * 8).fold(1.0f32, |x, _| x + 1e-7)
    })?;
    let (m, b) = (0.999_999f32, 1e-7f32);
    let fma = chain_latency(ctx, "fma_chain", &[1.0, m, b, 0.0], |iters| {
        (0..iters * 8).fold(1.0f32, |x, _| x.mul_add(m, b))
    })?;
    let (ops, ops_ci, n) = throughput(ctx, m, b)?;
    Ok(OpTimes {
        add_latency_ns: add.summary.median * 1e9,
        add_ci95_ns: [add.summary.ci95[0] * 1e9, add.summary.ci95[1] * 1e9],
        fma_latency_ns: fma.summary.median * 1e9,
        fma_ci95_ns: [fma.summary.ci95[0] * 1e9, fma.summary.ci95[1] * 1e9],
        fma_ops_per_second: ops,
        fma_ops_ci95: ops_ci,
        throughput_executors: n,
    })
}

fn throughput(
    ctx: &mut BenchContext<'_>,
    m: f32,
    b: f32,
) -> Result<(f64, [f64; 2], u64), BenchError> {
    let info = ctx.device.info();
    let n: u32 = match info.class {
        DeviceClass::Gpu => info
            .resident_executors()
            .map_or(1 << 20, |r| (r * 4).min(1 << 24) as u32),
        DeviceClass::Cpu => (info.compute_units * 64).max(64),
    };
    let iters: u32 = match info.class {
        DeviceClass::Gpu => 1 << 12,
        DeviceClass::Cpu => 1 << 10,
    };
    let out = ctx.device.alloc(n as usize * 4)?;
    let launch = Launch::linear(n as usize, ctx.group());
    let args = [
        Arg::Buf(&out),
        Arg::U32(n),
        Arg::U32(iters),
        Arg::F32(m),
        Arg::F32(b),
    ];
    ctx.launch("fma_throughput", &launch, &args)?;
    let got = download_f32(ctx.device, &out, n as usize)?;
    let bad = (0..n)
        .step_by((n as usize / 997).max(1))
        .find(|&i| !close(got[i as usize], fma_throughput_value(i, iters, m, b)));
    verify(bad.is_none(), "fma_throughput", || {
        format!("executor {bad:?} differs from the host")
    })?;
    let ops = f64::from(n) * f64::from(iters) * 8.0;
    let name = "fma_throughput_s";
    let measured = ctx.measure(name, || Ok(ctx.launch("fma_throughput", &launch, &args)?.0))?;
    ctx.record(name, &measured);
    let s = &measured.summary;
    Ok((
        ops / s.median,
        [ops / s.ci95[1], ops / s.ci95[0]],
        u64::from(n),
    ))
}
